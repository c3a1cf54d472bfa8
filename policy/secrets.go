package policy

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Finding is one match of a detector: its type and where it is, as byte
// offsets into the scanned text (Start inclusive, End exclusive, both on
// rune boundaries of valid UTF-8). It never holds any of the text, so it can
// be logged, stored and returned to the caller.
type Finding struct {
	Type string `json:"type"`
	// Field is the scanned field, set by Decide: "content", "reason",
	// "agent", "conversation", or "metadata" followed by the path of the
	// value ("metadata.db.password", "metadata.tags[2]") or of the key
	// ("metadata[#0]", its position in sorted key order); a key is shown in
	// a path only when it is a plain identifier in which no secret was
	// found.
	Field string `json:"field,omitempty"`
	Start int    `json:"start"`
	End   int    `json:"end"`
}

// Secret finding types.
const (
	SecretAWSAccessKeyID      = "aws_access_key_id"
	SecretAWSSecretAccessKey  = "aws_secret_access_key"
	SecretGCPAPIKey           = "gcp_api_key"
	SecretGoogleOAuthToken    = "google_oauth_token"
	SecretGitHubToken         = "github_token"
	SecretGitLabToken         = "gitlab_token"
	SecretSlackToken          = "slack_token"
	SecretSlackWebhook        = "slack_webhook"
	SecretStripeKey           = "stripe_key"
	SecretOpenAIKey           = "openai_api_key"
	SecretAnthropicKey        = "anthropic_api_key"
	SecretTwilioKey           = "twilio_api_key"
	SecretSendGridKey         = "sendgrid_api_key"
	SecretNPMToken            = "npm_token"
	SecretPyPIToken           = "pypi_token"
	SecretAzureStorageKey     = "azure_storage_key"
	SecretHuggingFaceToken    = "huggingface_token"
	SecretDiscordBotToken     = "discord_bot_token"
	SecretPrivateKey          = "private_key"
	SecretJWT                 = "jwt"
	SecretBearerToken         = "bearer_token"
	SecretAuthorizationHeader = "authorization_header"
	SecretCredential          = "credential_assignment"
	SecretURLCredentials      = "url_credentials"
	SecretPaymentCard         = "payment_card"
	SecretUSSSN               = "us_ssn"
	SecretUKNINO              = "uk_nino"
	SecretIBAN                = "iban"
	SecretMemgateKey          = "memgate_api_key"
	SecretShopifyToken        = "shopify_token"
	SecretDigitalOceanToken   = "digitalocean_token"
	SecretTelegramBotToken    = "telegram_bot_token"
	SecretMailgunKey          = "mailgun_api_key"
)

// SecretTypes lists every type DetectSecrets reports.
var SecretTypes = []string{
	SecretAWSAccessKeyID, SecretAWSSecretAccessKey, SecretGCPAPIKey, SecretGoogleOAuthToken,
	SecretGitHubToken, SecretGitLabToken, SecretSlackToken, SecretSlackWebhook, SecretStripeKey,
	SecretOpenAIKey, SecretAnthropicKey, SecretTwilioKey, SecretSendGridKey, SecretNPMToken,
	SecretPyPIToken, SecretAzureStorageKey, SecretHuggingFaceToken, SecretDiscordBotToken,
	SecretPrivateKey, SecretJWT, SecretBearerToken, SecretAuthorizationHeader, SecretCredential,
	SecretURLCredentials, SecretPaymentCard, SecretUSSSN, SecretUKNINO, SecretIBAN, SecretMemgateKey,
	SecretShopifyToken, SecretDigitalOceanToken, SecretTelegramBotToken, SecretMailgunKey,
}

// DetectSecrets returns the credentials and personal identifiers in text,
// ordered by offset, without overlaps (where two detectors match the same
// bytes, the more specific type is kept).
//
// What it finds, and the rules that keep false positives down:
//
//   - Provider tokens by their documented prefixes and lengths: AWS access
//     key ids (AKIA, ASIA, ABIA, ACCA, A3T…; 20 characters, the non-AKIA
//     prefixes only with a digit), AWS secret keys after a
//     secret_access_key name, GCP API keys (AIza…), Google OAuth tokens
//     (ya29.), GitHub (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_), GitLab
//     (glpat-), Slack tokens (xoxb-, xoxp-, xoxa-, xoxe-, xoxr-, xoxs-,
//     xapp-) and webhook URLs, Stripe secret and restricted keys (sk_live_,
//     rk_live_, sk_test_, rk_test_; publishable pk_ keys are not secret),
//     OpenAI (sk-, sk-proj-, sk-svcacct-, sk-admin-; the body must mix upper
//     case, lower case and digits), Anthropic (sk-ant-), Twilio API keys (SK
//     and 32 hex digits), SendGrid (SG.x.y), npm (npm_), PyPI (pypi-), Azure
//     storage and service bus keys (AccountKey=, SharedAccessKey=), Hugging
//     Face (hf_, mixed case), Discord bot tokens (three dotted parts whose
//     first decodes to a numeric user id), private-key PEM blocks (any
//     "BEGIN … PRIVATE KEY" header, to the END line or the end of the text),
//     JWTs (three base64url parts whose header decodes to a JSON object with
//     "alg"), Bearer tokens and Authorization header values, and memgate's
//     own API keys (mgk_ and 43 base64url characters, auth.SecretPrefix and
//     auth.SecretLen; not a documentation placeholder such as
//     mgk_XXXX… or mgk_your_key_here…).
//     A token must stand alone: a prefix glued to a longer word, or a body
//     longer than the format allows, does not match.
//   - Credentials in key: value, key=value, key => value and "key": "value"
//     form, where the key ends in password, passwd, passphrase, pwd, secret,
//     token, api_key/apikey/api-key, access_key, private_key or auth
//     (optionally followed by _key, _token or _secret, so db_password,
//     client_secret and auth_token count but author, tokens and token_count
//     do not), or is the word for password in another language memgate's
//     users write (Passwort, Kennwort, contraseña, mot de passe, senha,
//     wachtwoord, пароль, 密码, パスワード). The value must be at least 8
//     bytes, mix two character classes
//     or be 16 bytes long, and not be a placeholder (***, xxxx, <redacted>,
//     ${VAR}, {{var}}, $VAR, changeme, example, none, null, …), a URL, a path,
//     or an unquoted identifier such as os.environ or getpass. Prose ("the
//     password is …") is not matched.
//   - URLs with a password in their user information (scheme://user:pass@host,
//     any scheme, the password possibly holding '#', '?' or '/'), unless the
//     password is a placeholder.
//   - PINs and access codes stated with what they unlock ("Debit card PIN
//     is 4817", "gate code 2580#", "digicode : 4417B", "暗証番号は4817"): 3
//     to 8 digits after the code's name and a verb or sign that states it,
//     not a date, a phone number or an Indian postal "pin code".
//   - Passphrases and seed or recovery phrases named in the gate's
//     languages ("Herstelzin van de wallet: …", "Сид-фраза: …").
//   - Payment card numbers: 13 to 19 digits, contiguous or grouped by single
//     spaces or dashes in a card layout (4-4-4-4, 4-6-5, …), with a known
//     issuer prefix and length (Visa, Mastercard, Amex, Discover, Diners,
//     JCB, UnionPay, Maestro, Mir) and a valid Luhn check digit.
//   - US social security numbers written ###-##-#### with a valid area
//     (not 000, 666 or 9xx), group (not 00) and serial (not 0000).
//   - UK national insurance numbers (two letters from the allowed set, six
//     digits, A–D; spaces allowed between pairs), upper case only.
//   - IBANs (upper case, optionally grouped by fours) with a known country,
//     that country's length and a valid mod-97 check.
//
// Text is scanned as given and, when that differs, in its normalized form
// (see normalize): NFKC, so fullwidth or mathematical digits and letters
// read as ASCII; without default ignorable code points, so a key with
// zero-width characters inside or a password split by soft hyphens reads
// whole; with look-alike letters from other scripts folded in words that
// mix them with Latin ones. Offsets are mapped back to text, so a finding
// spans the original bytes, hidden characters included.
//
// Every pattern is matched in linear time: the literal triggers of all
// detectors are found in one pass over the text, and a regular expression
// (RE2) runs only on a bounded window at each trigger. Safe for concurrent
// use.
func DetectSecrets(text string) []Finding {
	return detectSecrets(normalize(text))
}

// detectSecrets scans the original text and, when it differs, the base
// view. Both are needed: normalization reveals hidden secrets, and the
// original keeps a secret that a removed character used to delimit.
func detectSecrets(n normalized) []Finding {
	hits := scanSecrets(n.orig.s, nil)
	if n.base != n.orig {
		k := len(hits)
		hits = scanSecrets(n.base.s, hits)
		mapHits(hits[k:], n.base)
	}
	hits = hiddenSecrets(n.base, hits)
	return resolve(hits, false)
}

// hiddenSecrets finds secrets written so that no token rule sees them
// whole: base64 or hex encoded ("QUtJQV…" is an AWS key id), or split
// into short groups by spaces, dashes or dots ("AKIA Z7QX 3M4R …"). Each
// is decoded or joined and scanned again; a finding spans the whole
// encoded or grouped text, with the type of what it hides.
func hiddenSecrets(v *view, hits []hit) []hit {
	text := v.s
	add := func(s, e int, inner []hit) {
		for _, h := range inner {
			a, b := s, e
			if v.parent != nil {
				a, b = v.origin(s, e)
			}
			hits = append(hits, hit{Finding{Type: h.Type, Start: a, End: b}, h.prio})
			break
		}
	}
	for _, c := range encodedRuns(text) {
		if inner := scanSecrets(c.text, nil); len(inner) > 0 {
			add(c.s, c.e, inner)
		}
	}
	for _, g := range groupedRuns(text) {
		if inner := scanSecrets(g.text, nil); len(inner) > 0 {
			add(g.s, g.e, inner)
		}
	}
	return hits
}

// groupedRuns finds three or more groups of 2 to 8 letters and digits,
// each holding a digit or written in capitals, separated by single
// spaces, dashes or dots, and returns them joined.
func groupedRuns(text string) []encodedRun {
	var out []encodedRun
	for i := 0; i < len(text); {
		if !isAlnum(text[i]) || i > 0 && isAlnum(text[i-1]) {
			i++
			continue
		}
		var joined []byte
		groups, j, last := 0, i, i
		for {
			k := j
			for k < len(text) && isAlnum(text[k]) {
				k++
			}
			g := text[j:k]
			if len(g) < 2 || len(g) > 8 || !(strings.ContainsAny(g, "0123456789") || strings.ToUpper(g) == g) {
				break
			}
			joined = append(joined, g...)
			groups++
			last = k
			if k+1 < len(text) && (text[k] == ' ' || text[k] == '-' || text[k] == '.') && isAlnum(text[k+1]) {
				j = k + 1
				continue
			}
			break
		}
		if groups >= 3 && len(joined) >= 16 {
			out = append(out, encodedRun{i, last, string(joined)})
		}
		i = max(last, i+1)
	}
	return out
}

// hit is a finding with the priority of its detector: where two overlap at
// the same start and length, the lower priority (more specific) wins.
type hit struct {
	Finding
	prio int
}

func scanSecrets(text string, hits []hit) []hit {
	hits = secretRules.scan(text, 0, hits)
	for i, d := range secretScanners {
		for _, f := range d.fn(text) {
			hits = append(hits, hit{Finding{Type: d.typ, Start: f[0], End: f[1]}, len(secretRules.rules) + i})
		}
	}
	return hits
}

// resolve orders hits by offset and drops every hit that overlaps one kept
// before it: the earliest, then longest, then most specific wins. With
// perType, only hits of the same type exclude each other, so a zero-width
// character inside an "ignore previous instructions" yields both findings.
func resolve(hits []hit, perType bool) []Finding {
	if len(hits) == 0 {
		return nil
	}
	sort.Slice(hits, func(i, j int) bool {
		a, b := hits[i], hits[j]
		if a.Start != b.Start {
			return a.Start < b.Start
		}
		if a.End != b.End {
			return a.End > b.End
		}
		return a.prio < b.prio
	})
	out := make([]Finding, 0, len(hits))
	end := -1
	ends := map[string]int{}
	for _, h := range hits {
		if perType {
			if e, ok := ends[h.Type]; ok && h.Start < e {
				continue
			}
			ends[h.Type] = h.End
		} else {
			if h.Start < end {
				continue
			}
			end = h.End
		}
		out = append(out, h.Finding)
	}
	return out
}

var secretRules = newRuleSet([]tokenRule{
	{
		// memgate's own keys: see auth.SecretPrefix and auth.SecretLen (this
		// package cannot import auth). A body of one character class, such
		// as the mgk_XXXX… of documentation, or one that spells out a
		// placeholder, is not a key.
		typ: SecretMemgateKey, cut: endOfToken, triggers: []string{"mgk_"}, fold: true, wordStart: true, window: 4 + 43,
		re: regexp.MustCompile(`^(?i:mgk)_[A-Za-z0-9_\-]{43}`), stop: isTokenByte,
		valid: func(text string, s, e int) bool { return classes(text[s+4:e]) >= 2 && !keyPlaceholder(text[s+4:e]) },
	},
	{
		// A memgate key spelled out in prose: "mgk_ followed by …", "mgk
		// and then …", "memgate key: …", "memgate token without the mgk_
		// bit in front, in case the app asks: …" with the body elsewhere
		// in the sentence, up to 24 words and signs on. The body is what
		// makes it a key: 32 or more base64url characters mixing upper
		// case, lower case and digits.
		typ: SecretMemgateKey, cut: endOfLine, triggers: []string{"mgk", "memgate"}, fold: true, wordStart: true, window: 160, group: 1,
		re: regexp.MustCompile(`(?i)^(?:mgk|memgate(?:[ _-]?(?:api|admin|agent|user))?[ _-]?(?:key|token|secret))[_-]?[\s:,."'()]` +
			`(?:["'\x60:,.()-]|\s|\b[a-z]{1,12}_?\b){0,24}?["'\x60]?([A-Za-z0-9_\-]{32,64})`),
		stop:  isTokenByte,
		valid: func(text string, s, e int) bool { return hasUpperLowerDigit(text[s:e]) && !keyPlaceholder(text[s:e]) },
	},
	{
		// A PIN or an access code stated with what it unlocks: "Debit card
		// PIN is 4817", "garage door keypad code 2580#", "code de la porte :
		// 4417", "暗証番号は4817". The name, optional words naming the card
		// or door ("for the blue card", "(Chase)"), a verb or sign that
		// states it, then 3 to 8 digits (3 only for a card's security
		// code); see validAccessCode for what is not one.
		typ: SecretCredential, cut: endOfLine, fold: true, wordStart: true, window: 160, group: 1,
		triggers: accessCodeTriggers,
		re:       accessCodePattern,
		valid:    validAccessCode,
		extend:   keypadKey,
	},
	{
		// A passphrase or recovery phrase: several words after the name.
		typ: SecretCredential, cut: endOfLine, fold: true, wordStart: true, window: 320, group: -1,
		triggers: seedPhraseTriggers,
		re: regexp.MustCompile(`(?i)^(?:` + alternation(seedPhraseTriggers) + `)` +
			`(?:\s[\p{L}\p{N}'’-]{1,20}){0,7}?` + // "for the wallet", "van zijn crypto-wallet", "de la cartera de Bitcoin de Javier"
			`(?:\s(?:is|was|es|est|ist|é|è|это)\s|\s?(?:[=:：—–]|->|=>)\s?|[是为為は는은]\s?)+(?:"([^"\n]{8,})"|'([^'\n]{8,})'|((?:\p{L}{2,12}(?:[ ,]{1,2}|-)){3,23}[\p{L}0-9]{1,12}))`),
		valid: passphraseValue,
	},
	{
		// Twilio: an account SID (AC and 32 hex digits) and an auth token
		// (32 hex digits) named as one; a bare 32-digit hex string is a hash.
		typ: SecretTwilioKey, cut: endOfToken, triggers: []string{"AC"}, wordStart: true, window: 34,
		re: regexp.MustCompile(`^AC[0-9a-f]{32}`), stop: isAlnum,
		valid: func(text string, s, e int) bool { return classes(text[s+2:e]) >= 2 },
	},
	{
		typ: SecretTwilioKey, cut: endOfLine, triggers: []string{"twilio", "auth token", "auth_token", "authtoken", "auth-token"}, fold: true, wordStart: true, window: 200, group: 1,
		re:    regexp.MustCompile(`(?i)^(?:twilio|auth[ _-]?token)[^\n]{0,120}?\b([0-9a-f]{32})\b`),
		stop:  isAlnum,
		valid: func(text string, s, e int) bool { return classes(text[s:e]) >= 2 },
	},
	{
		typ: SecretPrivateKey, cut: endOfLine, triggers: []string{"-----BEGIN "}, window: 96,
		re:     regexp.MustCompile(`^-----BEGIN (?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----`),
		extend: pemEnd,
	},
	{
		typ: SecretAWSAccessKeyID, cut: endOfToken, triggers: []string{"AKIA", "ASIA", "ABIA", "ACCA", "A3T"}, wordStart: true, window: 20,
		re:   regexp.MustCompile(`^(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}`),
		stop: isAlnum,
		valid: func(text string, s, e int) bool {
			return strings.HasPrefix(text[s:], "AKIA") || strings.ContainsAny(text[s+4:e], "0123456789")
		},
	},
	{
		typ: SecretAWSSecretAccessKey, cut: endOfLine, triggers: []string{"secret"}, fold: true, window: 128, group: 1,
		re:    regexp.MustCompile(`(?i)^secret_?access_?key["']?[ \t]*(?::=|=>|[:=])[ \t]*["']?([A-Za-z0-9/+]{40})`),
		stop:  isBase64Byte,
		valid: func(text string, s, e int) bool { return classes(text[s:e]) >= 2 },
	},
	{
		typ: SecretGCPAPIKey, cut: endOfToken, triggers: []string{"AIza"}, wordStart: true, window: 39,
		re: regexp.MustCompile(`^AIza[0-9A-Za-z_\-]{35}`), stop: isTokenByte,
	},
	{
		typ: SecretGoogleOAuthToken, cut: endOfToken, triggers: []string{"ya29."}, wordStart: true, window: 2048,
		re: regexp.MustCompile(`^ya29\.[0-9A-Za-z_\-]{20,}`), stop: isTokenByte,
	},
	{
		typ: SecretGitHubToken, cut: endOfToken, triggers: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, wordStart: true, window: 256,
		re: regexp.MustCompile(`^gh[pousr]_[A-Za-z0-9]{36,}`), stop: isWordByte,
	},
	{
		typ: SecretGitHubToken, cut: endOfToken, triggers: []string{"github_pat_"}, wordStart: true, window: 256,
		re: regexp.MustCompile(`^github_pat_[A-Za-z0-9_]{22,}`), stop: isWordByte,
	},
	{
		typ: SecretGitLabToken, cut: endOfToken, triggers: []string{"glpat-"}, wordStart: true, window: 80,
		re: regexp.MustCompile(`^glpat-[A-Za-z0-9_\-]{20,64}`), stop: isTokenByte,
	},
	{
		typ: SecretSlackToken, cut: endOfToken, triggers: []string{"xox"}, wordStart: true, window: 256,
		re: regexp.MustCompile(`^xox[abeprs]-[A-Za-z0-9\-]{10,}`), stop: isWordByte,
	},
	{
		typ: SecretSlackToken, cut: endOfToken, triggers: []string{"xapp-"}, wordStart: true, window: 256,
		re: regexp.MustCompile(`^xapp-\d-[A-Za-z0-9\-]{10,}`), stop: isWordByte,
	},
	{
		typ: SecretSlackWebhook, cut: endOfToken, triggers: []string{"hooks.slack.com/"}, fold: true, window: 320,
		re: regexp.MustCompile(`(?i)^hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+\-]{20,}`),
	},
	{
		typ: SecretStripeKey, cut: endOfToken, triggers: []string{"sk_live_", "rk_live_", "sk_test_", "rk_test_"}, wordStart: true, window: 256,
		re: regexp.MustCompile(`^[rs]k_(?:live|test)_[0-9A-Za-z]{16,}`), stop: isAlnum,
	},
	{
		typ: SecretAnthropicKey, cut: endOfToken, triggers: []string{"sk-ant-"}, wordStart: true, window: 320,
		re: regexp.MustCompile(`^sk-ant-[A-Za-z0-9_\-]{32,}`), stop: isTokenByte,
	},
	{
		typ: SecretOpenAIKey, cut: endOfToken, triggers: []string{"sk-"}, wordStart: true, window: 320,
		re: regexp.MustCompile(`^sk-(?:(?:proj|svcacct|admin)-)?([A-Za-z0-9_\-]{32,})`), stop: isTokenByte,
		valid: func(text string, s, e int) bool { return hasUpperLowerDigit(openAIBody(text[s:e])) },
	},
	{
		typ: SecretTwilioKey, cut: endOfToken, triggers: []string{"SK"}, wordStart: true, window: 34,
		re: regexp.MustCompile(`^SK[0-9a-fA-F]{32}`), stop: isAlnum,
		valid: func(text string, s, e int) bool { return classes(text[s+2:e]) >= 2 },
	},
	{
		typ: SecretSendGridKey, cut: endOfToken, triggers: []string{"SG."}, wordStart: true, window: 100,
		re: regexp.MustCompile(`^SG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64}`), stop: isTokenByte,
	},
	{
		typ: SecretNPMToken, cut: endOfToken, triggers: []string{"npm_"}, wordStart: true, window: 40,
		re: regexp.MustCompile(`^npm_[A-Za-z0-9]{36}`), stop: isWordByte,
		valid: func(text string, s, e int) bool { return classes(text[s+4:e]) >= 2 },
	},
	{
		// Shopify access tokens: shpat_, shpca_, shppa_, shpss_ and 32 hex
		// digits.
		typ: SecretShopifyToken, cut: endOfToken, triggers: []string{"shpat_", "shpca_", "shppa_", "shpss_"}, wordStart: true, window: 40,
		re: regexp.MustCompile(`^shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}`), stop: isWordByte,
	},
	{
		// DigitalOcean tokens: dop_v1_, doo_v1_, dor_v1_ and 64 hex digits.
		typ: SecretDigitalOceanToken, cut: endOfToken, triggers: []string{"dop_v1_", "doo_v1_", "dor_v1_"}, wordStart: true, window: 72,
		re: regexp.MustCompile(`^do[opr]_v1_[a-f0-9]{64}`), stop: isWordByte,
	},
	{
		// Mailgun API keys: key- and 32 hex digits, mixing letters and digits.
		typ: SecretMailgunKey, cut: endOfToken, triggers: []string{"key-"}, wordStart: true, window: 40,
		re: regexp.MustCompile(`^key-[a-f0-9]{32}`), stop: isWordByte,
		valid: func(text string, s, e int) bool { return classes(text[s+4:e]) >= 2 },
	},
	{
		typ: SecretPyPIToken, cut: endOfToken, triggers: []string{"pypi-"}, wordStart: true, window: 320,
		re: regexp.MustCompile(`^pypi-[A-Za-z0-9_\-]{50,}`), stop: isTokenByte,
	},
	{
		typ: SecretAzureStorageKey, cut: endOfLine, triggers: []string{"accountkey", "sharedaccesskey"}, fold: true, wordStart: true, window: 160, group: 1,
		re:   regexp.MustCompile(`(?i)^(?:accountkey|sharedaccesskey)[ \t]*=[ \t]*([A-Za-z0-9+/]{30,}={0,2})`),
		stop: isBase64Byte,
	},
	{
		typ: SecretHuggingFaceToken, cut: endOfToken, triggers: []string{"hf_"}, wordStart: true, window: 43,
		re: regexp.MustCompile(`^hf_[A-Za-z0-9]{34,40}`), stop: isWordByte,
		valid: func(text string, s, e int) bool { return hasUpperAndLower(text[s+3 : e]) },
	},
	{
		typ: SecretJWT, cut: endOfToken, triggers: []string{"eyJ"}, wordStart: true, window: 8192,
		re:    regexp.MustCompile(`^eyJ[A-Za-z0-9_\-]{6,}\.[A-Za-z0-9_\-]{2,}\.[A-Za-z0-9_\-]{8,}`),
		stop:  func(b byte) bool { return isTokenByte(b) || b == '.' },
		valid: validJWT,
	},
	{
		typ: SecretAuthorizationHeader, cut: endOfLine, triggers: []string{"authorization"}, fold: true, wordStart: true, window: 4200, group: 1,
		re:    regexp.MustCompile(`(?i)^authorization["']?[ \t]*[:=][ \t]*["']?(?:(?:basic|bearer|token|digest|apikey)[ \t]+)?([A-Za-z0-9\-._~+/]{8,}=*)`),
		stop:  isTokenByte,
		valid: validOpaqueToken,
	},
	{
		typ: SecretBearerToken, cut: endOfLine, triggers: []string{"bearer"}, fold: true, wordStart: true, window: 4200, group: 1,
		re:    regexp.MustCompile(`(?i)^bearer[ \t]+([A-Za-z0-9\-._~+/]{20,}=*)`),
		stop:  isTokenByte,
		valid: validOpaqueToken,
	},
	{
		typ: SecretCredential, cut: endOfLine, fold: true, window: 320, group: -1,
		triggers: []string{"password", "passwd", "passphrase", "pwd", "secret", "token", "api_key", "api-key", "apikey",
			"access_key", "access-key", "accesskey", "private_key", "private-key", "privatekey", "auth"},
		re: regexp.MustCompile(`(?i)^(?:password|passwd|passphrase|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|auth)` +
			`(?:[_-]?(?:key|token|secret))?["'*]{0,2}[ \t]*(?::=|=>|[:=])[ \t*]*` + credentialValue),
		quick: assignmentAhead,
		valid: validCredential,
	},
	{
		// The same, with the word for password in the other languages of
		// InstructionLanguages ("Passwort: …", "contraseña = …", "пароль: …").
		typ: SecretCredential, cut: endOfLine, fold: true, window: 320, group: -1,
		triggers: []string{"passwort", "kennwort", "contrasena", "contraseña", "contrasenya", "mot de passe", "motdepasse", "senha",
			"wachtwoord", "пароль", "Пароль", "ПАРОЛЬ", "密码", "密碼", "口令", "パスワード"},
		re: regexp.MustCompile(`(?i)^(?:passwort|kennwort|contrase(?:ñ|n)a|contrasenya|mot de passe|motdepasse|senha|wachtwoord|пароль|密码|密碼|口令|パスワード)` +
			`["'*]{0,2}[ \t]*(?::=|=>|[:=])[ \t*]*` + credentialValue),
		quick: assignmentAhead,
		valid: validCredential,
	},
})

// withCapitals adds to ws each entry that starts with a non-ASCII letter
// with that letter in upper case ("сид-фраза", "Сид-фраза"): a rule's
// triggers fold ASCII letters only.
func withCapitals(ws ...string) []string {
	out := slices.Clone(ws)
	for _, w := range ws {
		r, n := utf8.DecodeRuneInString(w)
		if u := unicode.ToUpper(r); r >= utf8.RuneSelf && u != r {
			if c := string(u) + w[n:]; !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	return out
}

// seedPhraseTriggers name a passphrase or a wallet's seed or recovery
// phrase, in the gate's languages.
var seedPhraseTriggers = withCapitals("passphrase", "pass phrase", "seed phrase", "seed-phrase", "recovery phrase", "mnemonic phrase",
	"mnemonic", "secret phrase", "seed words", "recovery words", "backup phrase",
	"frase semilla", "frase de recuperación", "frase de recuperacion", "palabras semilla", "palabras de recuperación",
	"palabras de recuperacion", "frase secreta", "phrase de récupération", "phrase de recuperation", "phrase secrète",
	"phrase secrete", "phrase de passe", "phrase mnémonique", "phrase mnemonique", "mots de récupération", "mots de recuperation",
	"wiederherstellungsphrase", "wiederherstellungswörter", "wiederherstellungsworter", "wiederherstellungssatz", "seed-wörter",
	"frase de recuperação", "frase de recuperacao", "frase semente", "palavras de recuperação", "palavras de recuperacao",
	"frase di recupero", "parole di recupero", "frase seed", "frase segreta", "frase mnemonica",
	"herstelzin", "herstelfrase", "herstelwoorden", "seedzin", "seed-zin", "geheime zin",
	"сид-фраза", "сид-фразу", "сид фраза", "мнемоническая фраза", "фраза восстановления", "фраза для восстановления",
	"секретная фраза",
	"助记词", "助記詞", "恢复短语", "恢復短語", "种子短语", "種子短語", "恢复词",
	"シードフレーズ", "リカバリーフレーズ", "復元フレーズ", "ニーモニック",
	"시드 문구", "복구 문구", "시드 구문", "복구 구문", "니모닉",
	"عبارة الاسترداد", "العبارة السرية", "عبارة الاسترجاع", "كلمات الاسترداد", "العبارة الأولية",
	"सीड फ्रेज़", "सीड फ्रेज", "रिकवरी फ्रेज़", "रिकवरी फ्रेज")

// accessCodeTriggers name a PIN or an access code: of a card, a phone, a
// door, a gate, an alarm, a safe, in the gate's languages.
var accessCodeTriggers = withCapitals(
	"pin", "pin code", "pin number", "pincode", "pin-code", "passcode", "pass code", "access code", "entry code", "door code",
	"gate code", "keypad code", "alarm code", "disarm code", "arming code", "lock code", "lockbox code", "key safe code",
	"keysafe code", "safe code", "safe combination", "lock combination", "garage code", "unlock code", "intercom code",
	"buzzer code", "security code", "cvv", "cvv2", "cvc", "puk",
	"code",                               // only as "code to the front door", "code for the gate" …
	"codice", "código", "codigo", "kode", // only as "codice del portone", "código del portal" …
	"código pin", "codigo pin", "clave del cajero", "clave de la tarjeta", "código de acceso", "codigo de acceso",
	"código de la puerta", "codigo de la puerta", "código de la alarma", "codigo de la alarma", "código del portón",
	"codigo del porton", "código de seguridad", "codigo de seguridad",
	"code pin", "code confidentiel", "digicode", "code d'accès", "code d'acces", "code de la porte", "code de l'alarme",
	"code du portail", "code de l'immeuble", "code du cadenas",
	"geheimzahl", "pin-nummer", "zugangscode", "türcode", "turcode", "alarmcode", "tresorcode", "torcode", "schlosscode",
	"entsperrcode",
	"código do portão", "codigo do portao", "código do alarme", "codigo do alarme", "senha do cartão", "senha do cartao",
	"codice pin", "codice d'accesso", "codice di accesso", "codice del cancello", "codice dell'allarme", "codice della porta",
	"toegangscode", "deurcode", "poortcode", "kluiscode",
	"пин-код", "ПИН-код", "пин код", "пинкод", "код от домофона", "код домофона", "код сигнализации", "код доступа",
	"код от сейфа", "код от двери", "код от подъезда",
	"pin码", "门禁密码", "開門密碼", "开门密码", "取款密码", "银行卡密码", "支付密码", "门锁密码", "保险箱密码",
	"暗証番号", "pinコード", "解除コード", "暗証コード",
	"핀 번호", "pin 번호", "도어락 비밀번호", "현관 비밀번호", "카드 비밀번호", "공동현관 비밀번호",
	"الرقم السري", "رمز pin", "رمز الدخول", "رمز البوابة", "رمز الإنذار", "الرمز السري",
	"पिन", "पिन कोड", "पासकोड", "एटीएम पिन",
)

// accessCodePattern reads what follows a trigger of accessCodeTriggers:
// the rest of its name, words naming what it unlocks, a verb or sign that
// states it ("is", ":", "lautet", "は" …) or, without those words, a
// space, then the digits.
var accessCodePattern = regexp.MustCompile(`(?i)^(?:` +
	`code (?:to|for|of) (?:the |my |our |his |her |their )?(?:front |back |side |main |garage |apartment |building )?` +
	`(?:door|gate|garage|safe|alarm|lockbox|key ?safe|padlock|locker|building|house|apartment|flat|storage unit|shed|entrance)s?` +
	// "code of the door" in the other languages: codice del portone,
	// código del portal, code du coffre, código do cofre, code van de kluis
	`|(?:codice|c[oó]digo|code|kode) (?:(?:del|della|dello|dell'|di|de|del|de la|de l'|du|da|do|dos|das|van de|van het|voor de|für die|für den|fur die|fur den|vom|von der)\s?)` +
	`(?:portone|cancello|porta|cassaforte|citofono|allarme|garage|box|lucchetto|armadietto|palazzo|condominio|ingresso|cantina|` +
	`portal|puerta|port[oó]n|caja fuerte|alarma|garaje|candado|edificio|portero|taquilla|trastero|` +
	`porte|portail|coffre|coffre-fort|alarme|cadenas|immeuble|interphone|casier|` +
	`port[ãa]o|cofre|garagem|cadeado|pr[ée]dio|interfone|arm[áa]rio|` +
	`deur|voordeur|poort|kluis|kluisje|hangslot|gebouw|ingang|` +
	`tür|tur|haustür|haustur|tor|tresor|safe|alarmanlage|schloss|spind)` +
	`|` + alternation(slices.DeleteFunc(slices.Clone(accessCodeTriggers), func(w string) bool {
	return w == "code" || w == "codice" || w == "código" || w == "codigo" || w == "kode"
})) + `)` +
	`(?:(?:\s?\([^()\n]{1,40}\)|\s(?:for|of|to|on|at|in|de|del|de la|du|des|der|die|das|für|fur|da|do|di|della|dell'|van|voor|от|для|в|во|на|у|im|nel|nella|en|dans|no|na|op|` +
	`my|his|her|their|our|mi|su|mon|ma|son|sa|leur|meu|minha|seu|sua|mio|mia|suo|mijn|zijn|haar|meiner|meines|seiner|seines|ihrer|ihres|unserer|моей|моего|его|её)` +
	`(?:\s[\p{L}\p{N}'’-]{1,20}){1,4})?(?:\s?\([^()\n]{1,40}\))?` +
	`(?:\s(?:is(?: now)?|was|are|changed to|set to|became|es|era|est|c'est|était|etait|ist|lautet|war|é|è|это|هو|هي)\s|\s?[:=：]\s?|\s?(?:->|=>|-|–|—)\s?|\s?[是为為は는은]\s?)` +
	`|\s)(?:now |still |currently |["'])?[#*]?(\d{2,3}(?:-\d{2,3}){1,3}|\d{3,8})`)

// alternation is the regular expression matching any of ws, longest
// first, each quoted.
func alternation(ws []string) string {
	qs := make([]string, 0, len(ws))
	for _, w := range ws {
		qs = append(qs, regexp.QuoteMeta(w))
	}
	slices.SortStableFunc(qs, func(a, b string) int { return len(b) - len(a) })
	return strings.Join(qs, "|")
}

// validAccessCode checks the digits after a PIN or access code's name: 4
// to 8 of them (3 for a card's security code), or a combination in groups
// of 2 or 3 joined by dashes that is not a date, standing alone (not a
// date, a decimal, a phone number or part of a longer number), and not an
// Indian postal PIN code (six digits after "pin code" with no card, bank
// or phone named before it).
func validAccessCode(text string, s, e int) bool {
	n := e - s
	if groups := strings.Split(text[s:e], "-"); len(groups) > 1 {
		// A combination in groups ("19-44-07"): four digits at least, and
		// not a date (day and month, either way round, then a year).
		n = e - s - (len(groups) - 1)
		if n < 4 {
			return false
		}
		if len(groups) == 3 {
			a, _ := strconv.Atoi(groups[0])
			b, _ := strconv.Atoi(groups[1])
			if a >= 1 && b >= 1 && (a <= 31 && b <= 12 || a <= 12 && b <= 31) {
				return false
			}
		}
	}
	before := strings.ToLower(text[max(0, s-48):s])
	if n < 4 && !strings.Contains(before, "cvv") && !strings.Contains(before, "cvc") && !strings.Contains(before, "security code") &&
		!strings.Contains(before, "seguridad") {
		return false
	}
	e = keypadKey(text, e)
	if e < len(text) {
		c := text[e]
		if isAlnum(c) || c == '_' {
			return false
		}
		if (c == '-' || c == '/' || c == '.' || c == ',' || c == ':' || c == ' ') && e+1 < len(text) && isDigit(text[e+1]) {
			return false
		}
	}
	if n == 6 && (strings.Contains(before, "pin code") || strings.Contains(before, "pincode") || strings.Contains(before, "पिन कोड")) {
		for _, w := range []string{"card", "bank", "atm", "debit", "credit", "phone", "sim", "kaart", "karte", "tarjeta", "carte", "cartao", "carta"} {
			if strings.Contains(before, w) {
				return true
			}
		}
		return false
	}
	return true
}

// keypadKey extends the digits of an access code ending at e by the key
// of the keypad that follows them: "2580#", "*1234*", a digicode's
// "4417B".
func keypadKey(text string, e int) int {
	if e < len(text) && (text[e] == '#' || text[e] == '*' || text[e] >= 'A' && text[e] <= 'D' && (e+1 == len(text) || !isWordByte(text[e+1]))) {
		return e + 1
	}
	return e
}

// credentialValue is the value of a credential assignment: quoted, or up
// to white space or punctuation that ends a value.
const credentialValue = "(?:\"([^\"\\r\\n]{1,})\"|'([^'\\r\\n]{1,})'|([^\\s\"'`,;&(){}\\[\\]<>]{1,}))"

// secretScanners are detectors that are clearer as code than as a pattern.
// Each returns [start, end) spans.
var secretScanners = []struct {
	typ string
	fn  func(string) [][2]int
}{
	{SecretAWSSecretAccessKey, findAWSSecretKeys},
	{SecretAzureStorageKey, findAzureStorageKeys},
	{SecretCredential, findLoginPairs},
	{SecretCredential, findProsePasswords},
	{SecretDiscordBotToken, findDiscordTokens},
	{SecretTelegramBotToken, findTelegramTokens},
	{SecretURLCredentials, findURLCredentials},
	{SecretPaymentCard, findCards},
	{SecretUSSSN, findSSNs},
	{SecretUKNINO, findNINOs},
	{SecretIBAN, findIBANs},
}

// pemEnd extends a PEM header to the end of its "-----END …-----" line, or
// to the end of the text when the block is cut off (a partial key is still a
// key).
func pemEnd(text string, e int) int {
	i := strings.Index(text[e:], "-----END ")
	if i < 0 {
		return len(text)
	}
	i += e + len("-----END ")
	j := strings.Index(text[i:], "-----")
	if j < 0 || j > 64 {
		return len(text)
	}
	return i + j + len("-----")
}

// openAIBody strips the key's prefix, so that the prefix's own letters do
// not count towards the mix of character classes.
func openAIBody(k string) string {
	for _, p := range []string{"sk-proj-", "sk-svcacct-", "sk-admin-", "sk-"} {
		if b, ok := strings.CutPrefix(k, p); ok {
			return b
		}
	}
	return k
}

// validJWT checks that the first part decodes to a JSON object naming an
// algorithm: a dotted base64 string that is not a JWT does not match.
func validJWT(text string, s, e int) bool {
	dot := strings.IndexByte(text[s:e], '.')
	if dot < 0 {
		return false
	}
	raw := strings.TrimRight(text[s:s+dot], "=")
	b, err := base64.RawURLEncoding.DecodeString(raw)
	if err != nil {
		return false
	}
	var hdr map[string]any
	if json.Unmarshal(b, &hdr) != nil {
		return false
	}
	_, ok := hdr["alg"]
	return ok
}

// validOpaqueToken accepts a bearer or Authorization value that looks
// random: two character classes and not a placeholder.
func validOpaqueToken(text string, s, e int) bool {
	v := text[s:e]
	return classes(v) >= 2 && !isPlaceholder(v)
}

// assignmentAhead is the credential rule's cheap test: after the key word
// and its suffix letters, quotes, asterisks and blanks, an assignment sign
// must follow.
func assignmentAhead(text string, i int) bool {
	for j := i; j < len(text) && j < i+40; j++ {
		switch c := text[j]; {
		case c == ':' || c == '=':
			return true
		case isWordByte(c) || c == '-' || c == '"' || c == '\'' || c == '*' || c == ' ' || c == '\t' || c >= 0x80:
		default:
			return false
		}
	}
	return false
}

// validCredential decides whether the value of a password-like key is a
// credential rather than a placeholder, a reference or a word.
func validCredential(text string, s, e int) bool {
	v := text[s:e]
	if len(v) < 8 || isPlaceholder(v) {
		return false
	}
	if strings.Contains(v, "://") || strings.HasPrefix(v, "/") || strings.HasPrefix(v, "./") || strings.HasPrefix(v, "~/") {
		return false
	}
	quoted := s > 0 && (text[s-1] == '"' || text[s-1] == '\'')
	if !quoted {
		// An unquoted identifier or dotted name is a reference to the
		// secret (os.environ, settings.DB_PASSWORD, getpass), not the secret.
		ident := true
		for i := 0; i < len(v); i++ {
			c := v[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '.' || c == '$' || c == '-') {
				ident = false
				break
			}
		}
		if ident {
			return false
		}
		if e < len(text) && text[e] == '(' {
			return false
		}
	}
	return classes(v) >= 2 || len(v) >= 16
}

var placeholderWords = map[string]bool{
	"none": true, "null": true, "nil": true, "undefined": true, "empty": true, "true": true, "false": true,
	"hidden": true, "masked": true, "secret": true, "token": true, "password": true, "passwd": true,
	"required": true, "optional": true, "string": true, "test": true, "testing": true, "n/a": true,
	"unknown": true, "unset": true, "default": true,
}

var placeholderParts = []string{
	"redacted", "placeholder", "changeme", "change_me", "change-me", "changeit", "example", "your_", "your-",
	"yourpassword", "yourtoken", "yoursecret", "dummy", "sample", "xxxx", "****", "....", "<", ">",
	"${", "{{", "%(", "$(", "...", "…", "•", "insert", "replace_me", "replace-me", "todo", "fixme",
}

// keyPlaceholder reports the body of a documentation key such as
// mgk_your_memgate_key_goes_here_…: words a random body of that length
// does not contain by chance.
func keyPlaceholder(body string) bool {
	l := strings.ToLower(body)
	for _, p := range []string{"xxxxxxxx", "example", "your_", "your-", "placeholder", "redacted", "_here", "-here"} {
		if strings.Contains(l, p) {
			return true
		}
	}
	return false
}

// isPlaceholder reports whether v is an obvious stand-in for a secret.
func isPlaceholder(v string) bool {
	l := strings.ToLower(strings.TrimSpace(v))
	if placeholderWords[l] {
		return true
	}
	first, _ := utf8.DecodeRuneInString(l)
	same := true
	for _, r := range l {
		if r != first {
			same = false
			break
		}
	}
	if same {
		return true
	}
	for _, p := range placeholderParts {
		if strings.Contains(l, p) {
			return true
		}
	}
	// $VAR / $var_name: an environment reference.
	if strings.HasPrefix(l, "$") {
		ref := true
		for i := 1; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
				ref = false
				break
			}
		}
		if ref {
			return true
		}
	}
	return false
}

// findDiscordTokens finds id.timestamp.hmac tokens whose first part is the
// base64 of a numeric user id (17 to 20 digits).
func findDiscordTokens(text string) [][2]int {
	var out [][2]int
	for from := 0; from < len(text); {
		d := strings.IndexByte(text[from:], '.')
		if d < 0 {
			break
		}
		d += from
		from = d + 1
		s := d
		for s > 0 && d-s < 29 && isTokenByte(text[s-1]) {
			s--
		}
		if d-s < 23 || d-s > 28 || (s > 0 && (isTokenByte(text[s-1]) || text[s-1] == '.')) {
			continue
		}
		if c := text[s]; c != 'M' && c != 'N' && c != 'O' {
			continue
		}
		// timestamp part: exactly 6, then the hmac part: 27 to 38.
		t := d + 1
		if t+6 >= len(text) || text[t+6] != '.' || !allTokenBytes(text[t:t+6]) {
			continue
		}
		h := t + 7
		e := h
		for e < len(text) && e-h <= 38 && isTokenByte(text[e]) {
			e++
		}
		if e-h < 27 || e-h > 38 || (e < len(text) && (isTokenByte(text[e]) || text[e] == '.')) {
			continue
		}
		id, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(text[s:d], "="))
		if err != nil || len(id) < 17 || len(id) > 20 || !allDigits(string(id)) {
			continue
		}
		out = append(out, [2]int{s, e})
		from = e
	}
	return out
}

// findURLCredentials finds the password in scheme://user:password@host,
// in any scheme. A password may hold characters a URL would escape ('#',
// '?', '/', '@', ';'), as people paste connection strings
// ("postgres://app:Qv9#tLm2@db.example:5432/orders",
// "mysql://root:p@ss;w0rd!@10.0.0.12:3306/crm"): the user information
// runs to an '@' before the host, the last one that leaves a password of
// that shape (a URL parser takes the last '@' of the authority), as long
// as the user name holds none of '/', '?', '#'. A password holding such a
// character is not a port followed by a path ("host:8080/x?to=a@b.example"
// is a host, a port and an e-mail address in the query) and mixes three
// kinds of characters.
func findURLCredentials(text string) [][2]int {
	var out [][2]int
	var ats []int
	for from := 0; from < len(text); {
		p := strings.Index(text[from:], "://")
		if p < 0 {
			break
		}
		p += from
		from = p + 3
		// scheme: a letter then letters, digits, + . -
		s := p
		for s > 0 && p-s < 32 && (isAlnum(text[s-1]) || text[s-1] == '+' || text[s-1] == '.' || text[s-1] == '-') {
			s--
		}
		if p-s < 2 || !isAlpha(text[s]) {
			continue
		}
		u := p + 3
		ats = ats[:0]
		for i := u; i < len(text) && i-u < 512; i++ {
			c := text[i]
			if c <= ' ' || c == '"' || c == '\'' || c == '<' || c == '>' {
				break
			}
			if c == '@' {
				ats = append(ats, i)
			}
		}
		for k := len(ats) - 1; k >= 0; k-- {
			if ps, pe, ok := urlPassword(text, u, ats[k]); ok {
				out = append(out, [2]int{ps, pe})
				from = ats[k] + 1
				break
			}
		}
	}
	return out
}

// urlPassword returns the password of the user information text[u:at] of
// a URL whose host follows at, if it holds one.
func urlPassword(text string, u, at int) (int, int, bool) {
	if at+1 >= len(text) || !(isAlnum(text[at+1]) || text[at+1] == '[') {
		return 0, 0, false
	}
	colon := strings.IndexByte(text[u:at], ':')
	if colon < 0 || strings.ContainsAny(text[u:u+colon], "/?#@") {
		return 0, 0, false
	}
	ps, pe := u+colon+1, at
	if pe-ps < 1 || isPlaceholder(text[ps:pe]) || placeholderWords[strings.ToLower(text[ps:pe])] || strings.EqualFold(text[ps:pe], "pass") {
		return 0, 0, false
	}
	if strings.ContainsAny(text[ps:pe], "/?#@") {
		// A password with '#', '?', '/' or '@': not a port and a path,
		// and shaped like a password.
		d := ps
		for d < pe && isDigit(text[d]) {
			d++
		}
		if d > ps && d < pe && (text[d] == '/' || text[d] == '?' || text[d] == '#') || classes(text[ps:pe]) < 3 {
			return 0, 0, false
		}
	}
	return ps, pe, true
}

// findCards finds payment card numbers: digits in a card layout, a known
// issuer prefix and length, and a valid Luhn check digit.
func findCards(text string) [][2]int {
	var out [][2]int
	var groups []span
	var digits []byte
	for i := 0; i < len(text); {
		if !isDigit(text[i]) {
			i++
			continue
		}
		// A run must not continue a word, a decimal or a longer number.
		if i > 0 {
			p := text[i-1]
			if isAlpha(p) || p == '_' || ((p == '.' || p == ',' || p == '-' || p == '/') && i > 1 && isDigit(text[i-2])) {
				for i < len(text) && isDigit(text[i]) {
					i++
				}
				continue
			}
		}
		groups = groups[:0]
		var sep byte
		j := i
		for {
			s := j
			for j < len(text) && isDigit(text[j]) {
				j++
			}
			groups = append(groups, span{s, j})
			if j+1 < len(text) && (text[j] == ' ' || text[j] == '-') && isDigit(text[j+1]) && (sep == 0 || sep == text[j]) && len(groups) < 64 {
				sep = text[j]
				j++
				continue
			}
			break
		}
		end := j
		i = end
		if end < len(text) && (isAlpha(text[end]) || text[end] == '_') {
			continue
		}
		if end+1 < len(text) && (text[end] == '.' || text[end] == ',') && isDigit(text[end+1]) {
			continue
		}
		if len(groups) == 1 {
			if n := end - groups[0].s; n >= 13 && n <= 19 && validCard(text[groups[0].s:end]) {
				out = append(out, [2]int{groups[0].s, end})
			}
			continue
		}
		// Grouped: try the layouts starting at each group, longest first.
		for g := 0; g < len(groups); g++ {
			last := g
			for total := 0; last < len(groups) && total+groups[last].len() <= 19; last++ {
				total += groups[last].len()
			}
			for last--; last > g; last-- {
				if !cardLayout(groups[g : last+1]) {
					continue
				}
				digits = digits[:0]
				for _, x := range groups[g : last+1] {
					digits = append(digits, text[x.s:x.e]...)
				}
				if validCard(digits) {
					out = append(out, [2]int{groups[g].s, groups[last].e})
					g = last
					break
				}
			}
		}
	}
	return out
}

// span is a byte range [s, e).
type span struct{ s, e int }

func (x span) len() int { return x.e - x.s }

// cardLayout reports whether the digit groups are laid out the way cards
// are printed: fours with a shorter last group (4-4-4-4, 4-4-4-4-3,
// 4-4-4-1), or the 4-6-5 and 4-6-4 layouts of Amex and Diners; 13 to 19
// digits in all.
func cardLayout(gs []span) bool {
	total := 0
	for _, g := range gs {
		total += g.len()
	}
	if total < 13 || total > 19 {
		return false
	}
	if len(gs) == 3 && gs[0].len() == 4 && gs[1].len() == 6 && (gs[2].len() == 5 || gs[2].len() == 4) {
		return true
	}
	for i, g := range gs {
		if l := g.len(); i < len(gs)-1 && l != 4 || i == len(gs)-1 && (l < 1 || l > 4) {
			return false
		}
	}
	return true
}

// validCard checks issuer prefix, length and Luhn for a string of digits.
func validCard[T string | []byte](d T) bool {
	return cardIssuer(d) && luhn(d)
}

func cardIssuer[T string | []byte](d T) bool {
	n := len(d)
	p := func(k int) int { // the first k digits as a number
		v := 0
		for i := 0; i < k && i < n; i++ {
			v = v*10 + int(d[i]-'0')
		}
		return v
	}
	switch {
	case d[0] == '4': // Visa
		return n == 13 || n == 16 || n == 19
	case p(2) >= 51 && p(2) <= 55, p(4) >= 2221 && p(4) <= 2720: // Mastercard
		return n == 16
	case p(2) == 34 || p(2) == 37: // Amex
		return n == 15
	case p(4) == 6011, p(3) >= 644 && p(3) <= 649, p(2) == 65, p(6) >= 622126 && p(6) <= 622925: // Discover
		return n >= 16 && n <= 19
	case p(2) == 62: // UnionPay
		return n >= 16 && n <= 19
	case p(4) >= 3528 && p(4) <= 3589: // JCB
		return n >= 16 && n <= 19
	case p(3) >= 300 && p(3) <= 305, p(2) == 36, p(2) == 38, p(2) == 39: // Diners
		return n >= 14 && n <= 19
	case p(4) >= 2200 && p(4) <= 2204: // Mir
		return n >= 16 && n <= 19
	}
	switch p(4) { // Maestro
	case 5018, 5020, 5038, 5893, 6304, 6759, 6761, 6762, 6763:
		return n >= 13 && n <= 19
	}
	return false
}

func luhn[T string | []byte](d T) bool {
	sum := 0
	double := false
	for i := len(d) - 1; i >= 0; i-- {
		v := int(d[i] - '0')
		if double {
			v *= 2
			if v > 9 {
				v -= 9
			}
		}
		sum += v
		double = !double
	}
	return sum%10 == 0
}

// findSSNs finds ###-##-#### with a valid area, group and serial.
func findSSNs(text string) [][2]int {
	var out [][2]int
	for from := 0; from < len(text); {
		p := strings.IndexByte(text[from:], '-')
		if p < 0 {
			break
		}
		p += from
		from = p + 1
		s, e := p-3, p+8
		if s < 0 || e > len(text) || text[p+3] != '-' {
			continue
		}
		if !allDigits(text[s:p]) || !allDigits(text[p+1:p+3]) || !allDigits(text[p+4:e]) {
			continue
		}
		if s > 0 && (isWordByte(text[s-1]) || text[s-1] == '-' || text[s-1] == '.' || text[s-1] == '/') {
			continue
		}
		if e < len(text) && (isWordByte(text[e]) || text[e] == '-' || (text[e] == '.' && e+1 < len(text) && isDigit(text[e+1]))) {
			continue
		}
		area, group, serial := text[s:p], text[p+1:p+3], text[p+4:e]
		if area == "000" || area == "666" || area[0] == '9' || group == "00" || serial == "0000" {
			continue
		}
		out = append(out, [2]int{s, e})
		from = e
	}
	return out
}

// findNINOs finds UK national insurance numbers: a valid two-letter prefix,
// three pairs of digits and a suffix A to D, optionally spaced.
func findNINOs(text string) [][2]int {
	var out [][2]int
	for i := 0; i+9 <= len(text); i++ {
		a, b := text[i], text[i+1]
		if !isUpper(a) || !isUpper(b) || (i > 0 && isWordByte(text[i-1])) {
			continue
		}
		if strings.IndexByte("DFIQUV", a) >= 0 || strings.IndexByte("DFIOQUV", b) >= 0 {
			continue
		}
		switch text[i : i+2] {
		case "BG", "GB", "KN", "NK", "NT", "TN", "ZZ":
			continue
		}
		j := i + 2
		ok := true
		for k := 0; k < 3 && ok; k++ {
			if j < len(text) && text[j] == ' ' {
				j++
			}
			ok = j+2 <= len(text) && isDigit(text[j]) && isDigit(text[j+1])
			j += 2
		}
		if !ok {
			continue
		}
		if j < len(text) && text[j] == ' ' {
			j++
		}
		if j >= len(text) || text[j] < 'A' || text[j] > 'D' {
			continue
		}
		j++
		if j < len(text) && isWordByte(text[j]) {
			continue
		}
		out = append(out, [2]int{i, j})
		i = j - 1
	}
	return out
}

// ibanLengths is the IBAN length of each country that uses one.
var ibanLengths = map[string]int{
	"AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BR": 29,
	"BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28, "EE": 20, "EG": 29,
	"ES": 24, "FI": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28,
	"HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20,
	"LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "MC": 27, "MD": 24, "ME": 22, "MK": 19,
	"MR": 27, "MT": 31, "MU": 30, "NL": 18, "NO": 15, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29,
	"RO": 24, "RS": 22, "SA": 24, "SC": 31, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "ST": 25, "SV": 28,
	"TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
}

// findIBANs finds IBANs: country, check digits and account characters,
// contiguous or in groups of four, of the country's length, passing mod 97.
func findIBANs(text string) [][2]int {
	var out [][2]int
	buf := make([]byte, 0, 34)
	for i := 0; i+15 <= len(text); i++ {
		if !isUpper(text[i]) || !isUpper(text[i+1]) || !isDigit(text[i+2]) || !isDigit(text[i+3]) {
			continue
		}
		if i > 0 && isWordByte(text[i-1]) {
			continue
		}
		want, ok := ibanLengths[text[i:i+2]]
		if !ok {
			continue
		}
		buf = append(buf[:0], text[i:i+4]...)
		j, inGroup := i+4, 0
		for j < len(text) && len(buf) < want {
			c := text[j]
			if c == ' ' && inGroup == 0 && len(buf) == 4 || c == ' ' && inGroup == 4 {
				if j+1 < len(text) && (isUpper(text[j+1]) || isDigit(text[j+1])) {
					inGroup = 0
					j++
					continue
				}
				break
			}
			if !isUpper(c) && !isDigit(c) {
				break
			}
			buf = append(buf, c)
			inGroup++
			j++
		}
		if len(buf) != want || (j < len(text) && isWordByte(text[j])) {
			continue
		}
		if !ibanMod97(buf) {
			continue
		}
		out = append(out, [2]int{i, j})
		i = j - 1
	}
	return out
}

// ibanMod97 moves the first four characters to the end, turns letters into
// 10..35 and checks the number is 1 mod 97.
func ibanMod97(b []byte) bool {
	rem := 0
	add := func(c byte) {
		if isDigit(c) {
			rem = (rem*10 + int(c-'0')) % 97
		} else {
			rem = (rem*100 + int(c-'A'+10)) % 97
		}
	}
	for _, c := range b[4:] {
		add(c)
	}
	for _, c := range b[:4] {
		add(c)
	}
	return rem == 1
}

// Byte classes. Tokens are ASCII, so byte tests keep offsets exact.

func isDigit(c byte) bool    { return c >= '0' && c <= '9' }
func isUpper(c byte) bool    { return c >= 'A' && c <= 'Z' }
func isAlpha(c byte) bool    { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isAlnum(c byte) bool    { return isAlpha(c) || isDigit(c) }
func isWordByte(c byte) bool { return isAlnum(c) || c == '_' }

// isTokenByte is the base64url alphabet.
func isTokenByte(c byte) bool { return isWordByte(c) || c == '-' }

func isBase64Byte(c byte) bool { return isAlnum(c) || c == '+' || c == '/' || c == '=' }

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return len(s) > 0
}

func allTokenBytes(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isTokenByte(s[i]) {
			return false
		}
	}
	return true
}

// classes counts the character classes in s: lower, upper, digit, other.
func classes(s string) int {
	var lo, up, di, ot int
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z':
			lo = 1
		case c >= 'A' && c <= 'Z':
			up = 1
		case isDigit(c):
			di = 1
		default:
			ot = 1
		}
	}
	return lo + up + di + ot
}

func hasUpperAndLower(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return r >= 'A' && r <= 'Z' }) >= 0 &&
		strings.IndexFunc(s, func(r rune) bool { return r >= 'a' && r <= 'z' }) >= 0
}

func hasUpperLowerDigit(s string) bool {
	return hasUpperAndLower(s) && strings.ContainsAny(s, "0123456789")
}

// findAWSSecretKeys finds AWS secret access keys without their name: 40
// characters of the base64 alphabet standing alone, mixing upper case,
// lower case and digits, and as random as a key is (Shannon entropy of at
// least 4.3 bits per character; English words and hex hashes have less).
func findAWSSecretKeys(text string) [][2]int {
	var out [][2]int
	edge := func(c byte) bool { return isBase64Byte(c) || c == '.' || c == '_' || c == '-' || c == '\\' || c == '%' }
	for i := 0; i+40 <= len(text); i++ {
		if !isAlnum(text[i]) || i > 0 && edge(text[i-1]) {
			continue
		}
		j := i
		for j < len(text) && j-i <= 40 && (isAlnum(text[j]) || text[j] == '/' || text[j] == '+') {
			j++
		}
		if j-i == 40 && (j == len(text) || !edge(text[j])) {
			k := text[i:j]
			if hasUpperLowerDigit(k) && entropy(k) >= 4.3 && strings.Count(k, "/") <= 4 {
				out = append(out, [2]int{i, j})
			}
		}
		i = j
	}
	return out
}

// findAzureStorageKeys finds Azure storage account keys without their
// name: 64 random bytes in base64, 86 characters of its alphabet and "==",
// standing alone, mixing upper case, lower case and digits, with the
// entropy of random base64 (at least 5 bits per character; a base64 run of
// text or of a small image header has less).
func findAzureStorageKeys(text string) [][2]int {
	var out [][2]int
	for i := 0; ; {
		k := strings.Index(text[i:], "==")
		if k < 0 {
			return out
		}
		e := i + k + 2
		s := i + k
		for s > 0 && isBase64Byte(text[s-1]) && text[s-1] != '=' {
			s--
		}
		if e-s == 88 && (s == 0 || !isTokenByte(text[s-1])) && (e == len(text) || !isTokenByte(text[e])) {
			if key := text[s : e-2]; hasUpperLowerDigit(key) && entropy(key) >= 5 {
				out = append(out, [2]int{s, e})
			}
		}
		i = e
	}
}

// findLoginPairs finds a login written as an e-mail address and its
// password side by side ("j.okafor@example.com / Tarmac-Blue-2026",
// "ana@example.org | Kettle9!Blue"): an address, then within a few
// bytes a separator ('/', '|', ':', ',' or ';') and a token shaped like a
// password (proseSecret) that is not itself an address or a URL.
func findLoginPairs(text string) [][2]int {
	var out [][2]int
	for i := 0; ; {
		k := strings.IndexByte(text[i:], '@')
		if k < 0 {
			return out
		}
		at := i + k
		e := at + 1
		for e < len(text) && (isWordByte(text[e]) || text[e] == '.' || text[e] == '-') {
			e++
		}
		i = e
		if at == 0 || !isWordByte(text[at-1]) || !strings.Contains(text[at:e], ".") {
			if i >= len(text) {
				return out
			}
			continue
		}
		addr := strings.TrimRight(text[at:e], ".")
		j := at + len(addr)
		sep := false
		for j < len(text) && j-at-len(addr) < 8 && (text[j] == ' ' || text[j] == '/' || text[j] == '|' || text[j] == ':' || text[j] == ',' || text[j] == ';') {
			sep = sep || text[j] != ' '
			j++
		}
		if !sep || j >= len(text) {
			continue
		}
		t := j
		for t < len(text) && text[t] > ' ' && text[t] != '"' && text[t] != '\'' {
			t++
		}
		if t > j && !strings.Contains(text[j:t], "@") && proseSecret(text, j, t) {
			out = append(out, [2]int{j, t})
		}
	}
}

// entropy is the Shannon entropy of s in bits per byte.
func entropy(s string) float64 {
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	h := 0.0
	n := float64(len(s))
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}

// passwordWords are the words for a password, passcode or PIN in the
// gate's languages, in lower case.
var passwordWords = []string{"password", "passwd", "passcode", "pw", "pwd", "contraseña", "contrasena", "clave",
	"mot de passe", "mdp", "passwort", "kennwort", "senha", "wachtwoord", "пароль", "密码", "密碼", "口令", "パスワード",
	"비밀번호", "암호", "كلمة المرور", "كلمة السر", "كلمة مرور", "كلمه مرور", "رمز المرور", "كلمة سر", "كلمه سر", "كلمة العبور",
	"पासवर्ड", "parola d'ordine"}

// notThePassword are words that, right after a password word, say the
// text is about something else: a hint, a manager, a policy.
var notThePassword = []string{" hint", " reminder", " manager", " reset", " policy", " rules", " length", " strength",
	" requirement", " field", " prompt", " generator", " vault"}

// findProsePasswords finds a password, passcode or PIN stated in prose
// ("Alice's bank password is Tr0ub4dor&3", "pw: …", "la contraseña del
// banco de Ana es …", "パスワードは …", "पासवर्ड … है"): one of
// passwordWords, then, within the next 64 bytes of the same sentence, the
// first token shaped like a password (proseSecret).
func findProsePasswords(text string) [][2]int {
	var out [][2]int
	lower := ""
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c|0x20 != 'p' && c != 'c' && c != 'C' && c != 'm' && c != 'M' && c != 'k' && c != 'K' && c != 's' && c != 'S' &&
			c != 'w' && c != 'W' && c < utf8.RuneSelf {
			continue
		}
		if lower == "" {
			lower = strings.ToLower(text)
			if len(lower) != len(text) {
				lower = asciiLower(text)
			}
		}
		for _, w := range passwordWords {
			if !strings.HasPrefix(lower[i:], w) {
				continue
			}
			if isAlpha(w[0]) && (i > 0 && isWordByte(text[i-1])) {
				continue
			}
			j := i + len(w)
			for j < len(text) && isAlpha(text[j]) && j-i-len(w) < 3 { // passwords, pins
				j++
			}
			if j < len(text) && (isWordByte(text[j]) || text[j] == '@') {
				continue
			}
			other := false
			for _, n := range notThePassword {
				if strings.HasPrefix(lower[j:], n) {
					other = true
				}
			}
			if other {
				break
			}
			if s, e, ok := proseToken(text, j); ok {
				out = append(out, [2]int{s, e})
				i = e - 1
			}
			break
		}
	}
	return out
}

// passwordManagers are products that keep passwords, named where a
// password would be ("in 1Password", "the LastPass vault").
var passwordManagers = []string{"1password", "lastpass", "keepass", "keepassxc", "bitwarden", "dashlane", "vaultwarden", "nordpass", "roboform", "enpass"}

func passwordManager(v string) bool {
	v = strings.ToLower(strings.TrimRight(v, "'s’"))
	return slices.Contains(passwordManagers, v)
}

// findTelegramTokens finds Telegram bot tokens: a bot id of 8 to 10 digits,
// ':', "AA" and 33 base64url characters, standing alone.
func findTelegramTokens(text string) [][2]int {
	var out [][2]int
	for i := 0; ; {
		k := strings.Index(text[i:], ":AA")
		if k < 0 {
			return out
		}
		c := i + k
		s := c
		for s > 0 && isDigit(text[s-1]) {
			s--
		}
		e := c + 3
		for e < len(text) && (isAlpha(text[e]) || isDigit(text[e]) || text[e] == '_' || text[e] == '-') {
			e++
		}
		if d := c - s; d >= 8 && d <= 10 && e-c-3 == 33 && (s == 0 || !isWordByte(text[s-1])) && hasUpperLowerDigit(text[c+3:e]) {
			out = append(out, [2]int{s, e})
		}
		i = c + 3
	}
}

// asciiLower lowers ASCII letters only, keeping every offset.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 32
		}
	}
	return strings.ReplaceAll(string(b), "Пароль", "пароль")
}

// proseToken returns the first token within 64 bytes after i, in the same
// sentence, that proseSecret accepts.
func proseToken(text string, i int) (int, int, bool) {
	end := min(len(text), i+64)
	for j := i; j < end; {
		for j < end && (text[j] == ' ' || text[j] == '\t' || text[j] == ':' || text[j] == '"' || text[j] == '\'' || text[j] == '=') {
			j++
		}
		k := j
		for k < len(text) && text[k] > ' ' && text[k] != '"' && text[k] != '\'' {
			k++
		}
		if k == j {
			r, n := utf8.DecodeRuneInString(text[j:])
			if r == '\n' || r == '。' {
				return 0, 0, false
			}
			j += max(n, 1)
			continue
		}
		tok := text[j:k]
		if e := j + len(strings.TrimRight(tok, ".,;:)]}»”」")); proseSecret(text, j, e) {
			return j, e, true
		}
		if strings.ContainsAny(tok, ".!?") && (k == len(text) || text[k] == ' ') && !strings.ContainsAny(strings.TrimRight(tok, ".!?"), "0123456789") {
			return 0, 0, false // the sentence ended
		}
		j = k
	}
	return 0, 0, false
}

// shellVariable reports a '$' that starts a variable ($VAR, ${X}, $1), not
// a dollar sign among a password's symbols ("Blu3Ocean$").
func shellVariable(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] == '$' && i+1 < len(v) && (isAlpha(v[i+1]) || isDigit(v[i+1]) || v[i+1] == '{' || v[i+1] == '_') {
			return true
		}
	}
	return false
}

// proseSecret decides whether the token after a password word is a
// password: not a word, a number, a date, a URL or a placeholder, but a
// token of 6 to 64 characters with a letter and a digit or symbol, of
// three character classes or at least 8 long. A PIN (digits alone) is
// not matched here: "the password is 4711" reads like many ordinary
// numbers; a PIN or access code named as one is the access-code rule's.
func proseSecret(text string, s, e int) bool {
	v := strings.TrimRight(text[s:e], ".,;:)]}'\"»”」")
	if strings.Contains(v, "://") || strings.Contains(v, "@") && strings.Contains(v, ".") && !strings.ContainsAny(v, "!#$%&*") || isPlaceholder(v) {
		return false
	}
	// Code that reads the secret (os.environ["X"], getenv(), $VAR,
	// settings.db_password) is not the secret.
	if strings.ContainsAny(v, "([{`/\\") || shellVariable(v) || v[0] == '@' || codeReference.MatchString(v) || envName.MatchString(v) {
		return false
	}
	if len(v) < 6 || passwordManager(v) {
		return false
	}
	// A letter, and a digit or a symbol other than the hyphens and
	// apostrophes of words ("hard-coded" is a word).
	letter, other := false, false
	for _, r := range v {
		switch {
		case unicode.IsLetter(r):
			letter = true
		case r != '-' && r != '\'' && r != '_':
			other = true
		}
	}
	if !letter || !other {
		return false
	}
	// A date, a time, a version or a size is not a password.
	if strings.Trim(v, "0123456789-/:.,x") == "" || strings.Trim(strings.ToLower(v), "0123456789.,") == "gb" {
		return false
	}
	c := classes(v)
	return c >= 3 || c >= 2 && len(v) >= 8
}

// passphraseValue accepts a quoted passphrase, or several words that are
// not a description of where the passphrase is ("is on a card in the safe").
func passphraseValue(text string, s, e int) bool {
	v := strings.ToLower(text[s:e])
	if s > 0 && (text[s-1] == '"' || text[s-1] == '\'') {
		return !isPlaceholder(v)
	}
	words := strings.FieldsFunc(v, func(r rune) bool { return r == ' ' || r == ',' || r == '-' })
	if len(words) < 4 {
		return false
	}
	for _, w := range words {
		if passphraseStop[w] {
			return false
		}
	}
	return true
}

var codeReference = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$`)

var envName = regexp.MustCompile(`^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$`)

var passphraseStop = map[string]bool{
	"the": true, "a": true, "an": true, "on": true, "in": true, "at": true, "is": true, "was": true, "to": true, "of": true,
	"for": true, "with": true, "my": true, "her": true, "his": true, "their": true, "written": true, "stored": true,
	"kept": true, "saved": true, "somewhere": true, "not": true, "it": true, "that": true, "this": true, "and": true,
	// Prose about a passphrase ("is long, she says, but she won't write it
	// down"): pronouns, conjunctions, verbs of saying and words that
	// describe it are not words of a passphrase someone chose.
	"she": true, "he": true, "they": true, "we": true, "i": true, "you": true, "but": true, "so": true, "or": true,
	"because": true, "says": true, "said": true, "thinks": true, "would": true, "will": true, "won": true, "can": true,
	"could": true, "should": true, "very": true, "too": true, "really": true, "also": true, "just": true, "which": true,
	"who": true, "long": true, "short": true, "easy": true, "hard": true, "simple": true, "strong": true, "weak": true,
	"different": true, "same": true, "changed": true, "new": true, "old": true,
}
