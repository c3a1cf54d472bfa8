package policy

import (
	"encoding/base64"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memgate/memgate"
)

// body returns n characters mixing upper case, lower case and digits, the
// shape of a random token. Test secrets are assembled from it so that no
// complete credential-shaped literal sits in the source.
func body(n int) string {
	const alphabet = "Qz9Xw7Lm3KpR5tV2bN8cH4jD6fG1sA0yE"
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(alphabet)
	}
	return b.String()[:n]
}

func b64url(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// secretCase is a text holding exactly one secret: secret is the part that
// must be inside the finding's span.
type secretCase struct {
	name, text, secret, typ string
}

func secretCases() []secretCase {
	awsSecret := "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "MARKERKEY1"
	jwt := b64url(`{"alg":"HS256","typ":"JWT"}`) + "." + b64url(`{"sub":"1234567890","name":"Ada"}`) + "." + body(43)
	discord := b64url("123456789012345678") + ".GaBcDe." + body(38)
	pem := "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA" + body(64) + "\n-----END RSA PRIVATE KEY-----"
	c := func(name, before, secret, after, typ string) secretCase {
		return secretCase{name, before + secret + after, secret, typ}
	}
	return []secretCase{
		c("aws access key id", "my key is ", "AKIA"+"Z7QX3M4RK3R0PLQ2", " thanks", SecretAWSAccessKeyID),
		c("aws temporary key id", "id=", "ASIA"+"Q2W3E4R5T6Y7U8I9", "", SecretAWSAccessKeyID),
		c("aws secret access key", "aws_secret_access_key = ", awsSecret, "\n", SecretAWSSecretAccessKey),
		c("aws secret access key json", `{"SecretAccessKey": "`, awsSecret, `"}`, SecretAWSSecretAccessKey),
		c("gcp api key", "key=", "AIza"+body(35), "&x=1", SecretGCPAPIKey),
		c("google oauth token", "token ", "ya29."+body(60), ".", SecretGoogleOAuthToken),
		c("github classic token", "use ", "ghp_"+body(36), " for ci", SecretGitHubToken),
		c("github oauth token", "", "gho_"+body(36), "", SecretGitHubToken),
		c("github server token", "", "ghs_"+body(36), "", SecretGitHubToken),
		c("github fine-grained token", "pat: ", "github_pat_"+body(22)+"_"+body(59), "", SecretGitHubToken),
		c("gitlab token", "GITLAB ", "glpat-"+body(20), " ok", SecretGitLabToken),
		c("slack bot token", "slack ", "xoxb-1234567890-1234567890123-"+body(24), "", SecretSlackToken),
		c("slack user token", "", "xoxp-1234567890-"+body(30), "", SecretSlackToken),
		c("slack app token", "", "xapp-1-A0123BCD-"+body(30), "", SecretSlackToken),
		c("slack webhook", "post to https://", "hooks.slack.com/services/T0000AAAA/B0000BBBB/"+body(24), " now", SecretSlackWebhook),
		c("stripe live key", "stripe: ", "sk_live_"+body(24), "", SecretStripeKey),
		c("stripe restricted test key", "", "rk_test_"+body(24), "", SecretStripeKey),
		c("openai project key", "OPENAI ", "sk-proj-"+body(48)+"_"+body(20), " end", SecretOpenAIKey),
		c("openai legacy key", "", "sk-"+body(48), "", SecretOpenAIKey),
		c("anthropic key", "ANTHROPIC_API_KEY is ", "sk-ant-api03-"+body(93)+"AA", "", SecretAnthropicKey),
		c("twilio api key", "twilio ", "SK"+"0123456789abcdef0123456789abcdef", "", SecretTwilioKey),
		c("sendgrid key", "", "SG."+body(22)+"."+body(43), "", SecretSendGridKey),
		c("npm token", "//registry/:_authToken ", "npm_"+body(36), "", SecretNPMToken),
		c("pypi token", "", "pypi-AgEIcHlwaS5vcmc"+body(60), "", SecretPyPIToken),
		c("azure storage connection string", "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=", body(86)+"==", ";EndpointSuffix=core.windows.net", SecretAzureStorageKey),
		c("hugging face token", "HF ", "hf_"+body(34), "", SecretHuggingFaceToken),
		c("discord bot token", "bot token ", discord, " end", SecretDiscordBotToken),
		c("rsa private key", "key:\n", pem, "\n", SecretPrivateKey),
		c("openssh private key", "", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA"+body(40)+"\n-----END OPENSSH PRIVATE KEY-----", "", SecretPrivateKey),
		c("ec private key", "", "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEI"+body(40)+"\n-----END EC PRIVATE KEY-----", "", SecretPrivateKey),
		c("pkcs8 private key", "", "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg"+body(40)+"\n-----END PRIVATE KEY-----", "", SecretPrivateKey),
		c("pgp private key block", "", "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF"+body(40)+"\n-----END PGP PRIVATE KEY BLOCK-----", "", SecretPrivateKey),
		c("jwt", "session=", jwt, "; path=/", SecretJWT),
		c("authorization header", "Authorization: Bearer ", body(40), "", SecretAuthorizationHeader),
		c("basic authorization header", "authorization: Basic ", "YWxhZGRpbjpvcGVuc2VzYW1l", "", SecretAuthorizationHeader),
		c("bearer token", "send it with bearer ", body(32), " please", SecretBearerToken),
		c("password colon", "password: ", "Hunter2xyz!", "", SecretCredential),
		c("env password", "DB_PASSWORD=", "s3cr3tP4ss", "\nDB_USER=app", SecretCredential),
		c("json api key", `{"api_key": "`, "a1b2c3d4e5f6g7h8", `"}`, SecretCredential),
		c("ruby client secret", "client_secret => '", "Zx9!mQ2#pL", "'", SecretCredential),
		c("token equals", "token=", "ab12cd34ef56", "&x=1", SecretCredential),
		c("passwd yaml", "  passwd: ", "correcthorse99", "\n", SecretCredential),
		c("auth token", "AUTH_TOKEN: ", "9f8e7d6c5b4aZZ", "", SecretCredential),
		c("markdown bold password", "**Password:** ", "Hunter2xyz!", "", SecretCredential),
		c("long single-class quoted password", `pwd = "`, "correcthorsebatterystaple", `"`, SecretCredential),
		c("url credentials", "db at postgres://admin:", "S3cretPw", "@db.internal:5432/app", SecretURLCredentials),
		c("url credentials empty user", "redis://:", "r3disPassw0rd", "@cache:6379", SecretURLCredentials),
		c("visa spaced", "card ", "4111 1111 1111 1111", " exp 12/29", SecretPaymentCard),
		c("mastercard dashed", "", "5555-5555-5555-4444", "", SecretPaymentCard),
		c("mastercard 2-series", "", "2223003122003222", "", SecretPaymentCard),
		c("amex contiguous", "amex:", "378282246310005", ".", SecretPaymentCard),
		c("amex 4-6-5", "", "3782 822463 10005", "", SecretPaymentCard),
		c("discover", "", "6011111111111117", "", SecretPaymentCard),
		c("jcb", "", "3530111333300000", "", SecretPaymentCard),
		c("diners", "", "30569309025904", "", SecretPaymentCard),
		c("visa after other number", "ref 555 ", "4012 8888 8888 1881", "", SecretPaymentCard),
		c("us ssn", "SSN: ", "536-22-8791", ".", SecretUSSSN),
		c("uk nino spaced", "NI number ", "AB 12 34 56 C", "", SecretUKNINO),
		c("uk nino compact", "", "JG103759A", ",", SecretUKNINO),
		c("iban grouped", "pay to ", "GB82 WEST 1234 5698 7654 32", " today", SecretIBAN),
		c("iban compact", "", "DE89370400440532013000", "", SecretIBAN),
		c("azure storage key without a name", "key for the backups: ", "hTGWokXLPhVCsA/kg0i61WaLnEGNCQ1vr62fC76d3PSrXF3oFE6c2KjVtw5RoKfSWKY0RJcx2K6/xBMmDWS/s+==", "", SecretAzureStorageKey),
		c("e-mail and password side by side", "login for the parking portal: j.okafor@example.com / ", "Tarmac-Blue-2026", "", SecretCredential),
		c("e-mail and password after a bar", "ana@example.org | ", "Kettle9!Blue", " for the gym", SecretCredential),
		c("spanish seed phrase", "Frase semilla de la cartera: ", "cometa nube tigre salsa bosque rayo hielo mapa lunes vidrio perla trueno", "", SecretCredential),
		c("french recovery phrase", "phrase de récupération : ", "lampe rivière soleil chat orange piano vent sable", "", SecretCredential),
		c("card pin with what it unlocks", "Debit card PIN for the green card is ", "6205", " (Visa)", SecretCredential),
		c("keypad code and its key", "Shed keypad code is ", "4702#", ", do not share", SecretCredential),
		c("alarm code without a verb", "alarm disarm code ", "9381", ".", SecretCredential),
		c("code to the door", "The code to the back door is ", "1164", ".", SecretCredential),
		c("digicode with a letter", "Digicode de l'immeuble : ", "7730B", "", SecretCredential),
		c("german pin of a card", "Die Geheimzahl meiner Karte lautet ", "6621", ".", SecretCredential),
		c("japanese pin", "暗証番号は", "4817", "です。", SecretCredential),
		c("russian intercom code", "Код домофона — ", "4590", ".", SecretCredential),
		c("card security code", "CVV ", "123", " on the back", SecretCredential),
		c("url password with a hash", "postgres://svc:", "Pq7#rT2mZx", "@db.internal.example:5432/app", SecretURLCredentials),
		c("url password with a question mark and a slash", "amqp://jobs:", "x9?K/2mWq", "@mq.internal.example/prod", SecretURLCredentials),
		c("dutch seed phrase", "Herstelzin van zijn crypto-wallet: ", "anchor velvet ribbon candle orbit meadow pilot frost", "", SecretCredential),
		c("russian seed phrase", "Сид-фраза кошелька: ", "violin harbor sugar meadow cactus pilot dragon ember", "", SecretCredential),
		c("korean recovery phrase", "복구 문구는 ", "shadow maple river cactus tunnel amber pilot frost", "", SecretCredential),
		c("memgate key body named without its prefix", "memgate token without the mgk_ bit in front, in case the app asks: ", body(40)+"x_9", "", SecretMemgateKey),
		c("memgate key body after mgk_ and words", "key for the sync job is mgk_ with, after the underscore and a space: ", body(43), "", SecretMemgateKey),
		c("arabic password without the article", "كلمة سر حساب البريد الخاص بسارة هي ", "Warda#2024", "", SecretCredential),
		c("italian building door code", "Il codice del portone del palazzo è ", "7720#", "", SecretCredential),
		c("spanish safe code", "El código de la caja fuerte del despacho es ", "4471", ".", SecretCredential),
		c("portuguese gate code", "Código do portão da garagem: ", "3390", "", SecretCredential),
		c("dutch safe code", "De code van de kluis is ", "8124", ".", SecretCredential),
		c("russian safe code in groups", "Код от сейфа в кабинете — ", "27-48-15", ".", SecretCredential),
		c("url password with an at sign and a semicolon", "CRM: mysql://root:", "k@ey;W0rd!", "@10.0.0.12:3306/crm", SecretURLCredentials),
		c("url password with two at signs", "redis://cache:", "a@b@C9x!", "@cache.internal.example:6379", SecretURLCredentials),
		c("spanish seed phrase named at length", "Frase semilla de la cartera de Ethereum de Lucía: ", "cometa nube tigre salsa bosque rayo hielo mapa lunes vidrio perla trueno", "", SecretCredential),
		// Last: a block without its END line runs to the end of the text.
		c("dsa private key cut off", "", "-----BEGIN DSA PRIVATE KEY-----\nMIIBuwIBAAKBgQ"+body(40), "", SecretPrivateKey),
	}
}

func TestDetectSecretsFinds(t *testing.T) {
	t.Parallel()
	for _, tc := range secretCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fs := DetectSecrets(tc.text)
			if len(fs) != 1 {
				t.Fatalf("got %d findings %+v, want one %s", len(fs), fs, tc.typ)
			}
			f := fs[0]
			if f.Type != tc.typ {
				t.Errorf("type %q, want %q", f.Type, tc.typ)
			}
			at := strings.Index(tc.text, tc.secret)
			if f.Start > at || f.End < at+len(tc.secret) {
				t.Errorf("span [%d,%d) does not cover the secret at [%d,%d)", f.Start, f.End, at, at+len(tc.secret))
			}
			if f.End-f.Start > len(tc.secret)+64 {
				t.Errorf("span [%d,%d) is much wider than the secret (%d bytes)", f.Start, f.End, len(tc.secret))
			}
		})
	}
}

func TestDetectSecretsIgnores(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, text string }{
		{"prose", "The quick brown fox jumps over the lazy dog. We passed the keys to Anna, who kept the secret."},
		{"prose about passwords", "Your password must be at least 8 characters long; tokens expire after an hour."},
		{"a password manager", "Passwords for the family accounts live in the shared 1Password vault called 'Home'."},
		{"another password manager", "My password is in Bitwarden, ask me for it."},
		{"e-mail and a date", "Write to ana@example.org / 2026-05-01 is the deadline."},
		{"e-mail and a word", "Send it to ana@example.org, thanks"},
		{"e-mail and another address", "ana@example.org / ben@example.org share the account."},
		{"base64 of text, 88 characters", "SGVsbG8gd29ybGQsIHRoaXMgaXMgYSBwbGFpbiBFbmdsaXNoIHNlbnRlbmNlIGFib3V0IHRoZSB3ZWF0aGVyLiA="},
		{"spanish phrase about a seed", "La frase semilla está guardada en la caja fuerte de casa."},
		{"memgate key named, no body", "The memgate token without the mgk_ bit in front is what the app asks for, see the wiki page."},
		{"memgate and a commit hash", "memgate key rotation landed in commit 9fceb02d0ae598e95dc970b74767f19372d61af8 yesterday."},
		{"arabic password named, no value", "كلمة سر البنك مكتوبة في الدفتر الأزرق."},
		{"italian tax code", "Il codice fiscale è sul tesserino, il codice del portone cambia a maggio 2026."},
		{"safe code and a date", "Код от сейфа — 12-05-23, сказал он, но это дата покупки."},
		{"door code with a phone number", "Il codice del portone è sul citofono, chiamare 02-4455-1200."},
		{"pin changed", "PIN changed yesterday, the bank says."},
		{"pin pad", "The PIN pad was broken at the store, so I paid cash."},
		{"pin reset date", "PIN reset on 2024-05-01."},
		{"pin digits count", "PIN: 4 attempts left before lockout. The alarm code has 6 digits."},
		{"zip and area codes", "Zip code is 94110, area code 415, promo code 2580."},
		{"indian postal pin code", "My pin code is 560001, near Koramangala."},
		{"door code elsewhere", "The door code is on the fridge; it changed in 2019."},
		{"gate code for a building", "Gate code for building 12 is on the intranet."},
		{"pin and a phone number", "PIN is 4817-2200-1234 on the form"},
		{"error code", "Error code 4040 again on the printer."},
		{"url with a port, a path and an address", "https://example.com:8080/login?next=ana@example.org"},
		{"url with a fragment and an address", "http://localhost:3000/x#y:z@host.example"},
		{"url with an address in its query", "https://example.com/signup?ref=news:weekly&to=ana@example.org"},
		{"url with a user name and an address", "ssh://git@example.com/repo.git and mail ana@example.org"},
		{"seed phrase kept somewhere", "Herstelzin ligt in de kluis bij de notaris, zegt Pieter."},
		{"seed phrase kept somewhere, at length", "La frase semilla de la cartera de Bitcoin de Javier está en un papel dentro de la caja fuerte de casa."},
		{"phone us", "Call me at +1 (415) 555-2671 or 415-555-2671 tomorrow."},
		{"phone uk", "Office: +44 20 7946 0958"},
		{"phone international digits", "+49 30 12345678 or 0049 30 12345678"},
		{"dates", "Due 2024-01-15, then 15/01/2024 and 12-05-2023."},
		{"order numbers", "Order #12345678 and order 112-2345678-1234567 shipped."},
		{"uuid", "request 123e4567-e89b-12d3-a456-426614174000 failed"},
		{"git sha", "fixed in commit 9fceb02d0ae598e95dc970b74767f19372d61af8"},
		{"16 digits failing luhn", "card 4111 1111 1111 1112"},
		{"16 digits failing luhn contiguous", "ref 4111111111111112"},
		{"luhn valid unknown issuer", "tracking 1234567812345670"},
		{"20 digit number", "account 41111111111111111111"},
		{"decimal number", "pi is 3.4111111111111111 roughly"},
		{"ip and version", "host 192.168.1.10 runs v1.2.3"},
		{"ssn invalid area 000", "000-12-3456"},
		{"ssn invalid area 666", "666-12-3456"},
		{"ssn invalid area 9xx", "912-34-5678"},
		{"ssn invalid group", "123-00-4567"},
		{"ssn invalid serial", "123-45-0000"},
		{"ssn inside longer number", "1-536-22-8791-2"},
		{"nino invalid prefix", "QQ 12 34 56 C and GB123456A"},
		{"iban bad checksum", "GB82 WEST 1234 5698 7654 33"},
		{"iban wrong length", "DE8937040044053201300"},
		{"masked password", "password: ********"},
		{"redacted password", "password=<redacted>"},
		{"changeme", "password: changeme"},
		{"changeme with digits", `password="changeme123"`},
		{"redacted marker", `"token": "REDACTED-2024-01"`},
		{"example value", "api_key: sk_example_12345678"},
		{"template password", `"password": "${DB_PASSWORD}"`},
		{"none token", "token: none"},
		{"env reference", "password = os.environ['PW']"},
		{"call", "password = getpass.getpass()"},
		{"your api key", "api_key: YOUR_API_KEY_HERE"},
		{"short value", "password: abc1"},
		{"single word", "token: expiredtoken"},
		{"author", "the author: Jane Austen 1811"},
		{"max tokens", "max_tokens: 40960000"},
		{"token count", "token_count=12345678"},
		{"password hash field", "password_hash: x9y8z7w6v5"},
		{"secret prose", "It's a secret: we love tea"},
		{"url placeholder password", "postgres://user:password@localhost/db"},
		{"url no password", "https://alice@example.com/path and https://example.com/a:b@c"},
		{"sk words", "sk-learn and task-force-alpha-bravo-charlie-delta-echo-foxtrot"},
		{"asia words", "ASIAPACIFICREGIONOFF and ASIAN FOOD MARKETPLACE"},
		{"stripe publishable", "pk_live_" + body(24)},
		{"hf identifier", "call hf_hub_download_function_name_longer_than_34"},
		{"not a jwt", b64url(`{"not":"jwt"}`) + "." + b64url(`{"sub":"1"}`) + ".abcdefghijkl"},
		{"token prefix in word", "xghp_" + body(36)},
		{"aws key too long", "AKIA" + "Z7QX3M4RK3R0PLQ2" + "X"},
		{"github token too short", "ghp_" + body(20)},
		{"bearer placeholder", "Authorization: Bearer <token>"},
		{"bearer word", "the bearer of bad news"},
		{"public key", "-----BEGIN PUBLIC KEY-----\nMIIBIjANBg\n-----END PUBLIC KEY-----"},
		{"dotted words", "Mr. Smith met Ms. Jones at 3 p.m. in St. Louis."},
		{"empty", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if fs := DetectSecrets(tc.text); len(fs) != 0 {
				t.Errorf("DetectSecrets(%q) = %+v, want none", tc.text, fs)
			}
		})
	}
}

// TestDetectSecretsHidden: a secret broken up with zero-width characters is
// still found, with a span in the original text.
func TestDetectSecretsHidden(t *testing.T) {
	t.Parallel()
	key := "AKIA" + "Z7QX3M4RK3R0PLQ2"
	text := "key " + key[:6] + "\u200b" + key[6:] + " end"
	fs := DetectSecrets(text)
	if len(fs) != 1 || fs[0].Type != SecretAWSAccessKeyID {
		t.Fatalf("got %+v, want one aws_access_key_id", fs)
	}
	if got := text[fs[0].Start:fs[0].End]; got != key[:6]+"\u200b"+key[6:] {
		t.Errorf("span covers %q", got)
	}
	if fs := DetectSecrets("key " + key + " end"); len(fs) != 1 {
		t.Errorf("control: got %+v", fs)
	}
}

// TestDetectSecretsMany: several secrets in one text are each found, in
// order, without overlap.
func TestDetectSecretsMany(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	cases := secretCases()
	for _, tc := range cases {
		b.WriteString("\n-- ")
		b.WriteString(tc.text)
		b.WriteString(" --\n")
	}
	fs := DetectSecrets(b.String())
	if len(fs) != len(cases) {
		t.Fatalf("got %d findings, want %d", len(fs), len(cases))
	}
	for i, f := range fs {
		if f.Type != cases[i].typ {
			t.Errorf("finding %d: type %q, want %q", i, f.Type, cases[i].typ)
		}
		if i > 0 && f.Start < fs[i-1].End {
			t.Errorf("finding %d overlaps the one before", i)
		}
	}
}

func TestLuhn(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		d  string
		ok bool
	}{{"4111111111111111", true}, {"4111111111111112", false}, {"79927398713", true}, {"79927398710", false}, {"0", true},
		{"1234567812345670", true}, // the "unknown issuer" negative case fails on its prefix, not on Luhn
	} {
		if got := luhn(tc.d); got != tc.ok {
			t.Errorf("luhn(%s) = %v", tc.d, got)
		}
	}
}

// checkFindings checks the contract of a detector's result: in bounds,
// ordered, on rune boundaries, and (unless overlap) disjoint.
func checkFindings(t *testing.T, text string, fs []Finding, overlap bool) {
	t.Helper()
	end, start := 0, 0
	for _, f := range fs {
		if f.Start < start || !overlap && f.Start < end || f.End <= f.Start || f.End > len(text) {
			t.Fatalf("finding %+v out of order or bounds (len %d, previous end %d)", f, len(text), end)
		}
		if utf8.ValidString(text) && (!utf8.RuneStart(text[f.Start]) || f.End < len(text) && !utf8.RuneStart(text[f.End])) {
			t.Fatalf("finding %+v not on rune boundaries", f)
		}
		if f.Field != "" {
			t.Fatalf("detector set field %q", f.Field)
		}
		end, start = f.End, f.Start
	}
}

func FuzzDetectSecrets(f *testing.F) {
	for _, tc := range secretCases() {
		f.Add(tc.text)
	}
	f.Add("key AKIA\u200bZ7QX3M4RK3R0PLQ2 é 4111 1111 1111 1111")
	f.Add("password: \xff\xfe12345678")
	f.Fuzz(func(t *testing.T, text string) {
		fs := DetectSecrets(text)
		checkFindings(t, text, fs, false)
		if again := DetectSecrets(text); !slices.Equal(fs, again) {
			t.Fatalf("not deterministic: %+v then %+v", fs, again)
		}
		for _, f := range fs {
			// The type is one of the named constants, so it can never
			// carry the matched text.
			if !slices.Contains(SecretTypes, f.Type) {
				t.Fatalf("finding type %q is not in SecretTypes", f.Type)
			}
		}
		// What the gate reports (reason, flags, error) names types and
		// offsets, never the secret: no matched span of 8 bytes or more
		// (shorter ones could occur by chance) shows in it.
		d := Default().Decide(&memgate.Memory{Kind: memgate.KindFact, Source: memgate.SourceUser, Content: text})
		report := d.Reason + "\n" + strings.Join(d.Flags, "\n")
		if d.Err != nil {
			report += "\n" + d.Err.Error()
		}
		for _, f := range fs {
			if span := text[f.Start:f.End]; len(span) >= 8 && strings.Contains(report, span) {
				t.Fatalf("the decision reports the matched text %q: %q", span, report)
			}
		}
	})
}
