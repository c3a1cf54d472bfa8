package policy

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/memgate/memgate"
)

// The labelled corpus in testdata/corpus (see its README.md): attacks the
// detectors must catch and ordinary memories they must leave alone.
type corpusEntry struct {
	ID        string `json:"id"`
	Lang      string `json:"lang"`
	Technique string `json:"technique"` // attacks: how the text is disguised
	Family    string `json:"family"`    // attacks: what it tries to do
	Category  string `json:"category"`  // benign: what kind of memory
	Expect    string `json:"expect"`    // instruction, secret or none
	Text      string `json:"text"`
	// Reason, when set, is the memory's reason: the entry is measured
	// through Decide, which scans both fields and what they make together.
	Reason string `json:"reason,omitempty"`
}

// Corpus thresholds: TestCorpusRates fails below them.
const (
	minDetection          = 0.95 // over all attacks
	minGroupDetection     = 0.80 // for every technique and every language
	maxFalsePositiveRatio = 0.01 // over all benign memories
)

func loadCorpus(t *testing.T, name string) []corpusEntry {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "corpus", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []corpusEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var e corpusEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("%s:%d: %v", name, n, err)
		}
		e.Text = expandSecrets(e.Text)
		e.Reason = expandSecrets(e.Reason)
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// expandSecrets replaces {{kind}} and {{kind:disguise}} with a token of
// that kind, assembled at run time so that no credential-shaped literal
// sits in the repository.
var secretTemplate = regexp.MustCompile(`\{\{([a-z0-9]+)(?::([a-z]+))?\}\}`)

func expandSecrets(s string) string {
	seed := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		seed = (seed ^ uint64(s[i])) * 1099511628211
	}
	// random draws n characters of alphabet from a generator seeded by the
	// text, so that every entry gets its own token and runs agree.
	random := func(n int, alphabet string) string {
		b := make([]byte, n)
		for i := range b {
			seed ^= seed << 13
			seed ^= seed >> 7
			seed ^= seed << 17
			b[i] = alphabet[seed%uint64(len(alphabet))]
		}
		return string(b)
	}
	const (
		awsKey  = "AKIA" + "Z7QX3M4RK3R0PLQ2"
		hexDigs = "0123456789abcdef"
		b64Digs = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
		b64url  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	)
	mgkKey := "mgk_" + body(43)
	return secretTemplate.ReplaceAllStringFunc(s, func(m string) string {
		g := secretTemplate.FindStringSubmatch(m)
		var tok string
		switch g[1] {
		case "awssecret":
			tok = random(37, b64Digs) + "aZ7"
		case "twiliosid":
			tok = "AC" + random(32, hexDigs)
		case "twiliotoken":
			tok = random(32, hexDigs)
		case "awsb64":
			tok = base64.StdEncoding.EncodeToString([]byte(awsKey))
		case "awsspaced", "awsdashed":
			sep := " "
			if g[1] == "awsdashed" {
				sep = "-"
			}
			var parts []string
			for i := 0; i < len(awsKey); i += 4 {
				parts = append(parts, awsKey[i:i+4])
			}
			tok = strings.Join(parts, sep)
		case "awshalf1":
			tok = awsKey[:10]
		case "awshalf2":
			tok = awsKey[10:]
		case "mgkupper":
			tok = "MGK_" + body(43)
		case "mgkbody":
			tok = random(40, b64Digs[:62]) + "x_9"
		case "mgkhalf1":
			tok = mgkKey[:22]
		case "mgkhalf2":
			tok = mgkKey[22:]
		case "mgk":
			tok = "mgk_" + body(43)
		case "openai":
			tok = "sk-proj-" + body(48)
		case "github":
			tok = "ghp_" + body(36)
		case "aws":
			tok = "AKIA" + "Z7QX3M4RK3R0PLQ2"
		case "stripe":
			tok = "sk_live_" + body(24)
		case "slack":
			tok = "xoxb-1234567890-1234567890123-" + body(24)
		case "anthropic":
			tok = "sk-ant-api03-" + body(93) + "AA"
		case "gitlab":
			tok = "glpat-" + body(20)
		case "npm":
			tok = "npm_" + body(36)
		// Kinds added with the held-out set heldout26b.
		case "google":
			tok = "AIza" + random(35, b64url)
		case "sendgrid":
			tok = "SG." + random(22, b64url) + "." + random(43, b64url)
		case "hf":
			tok = "hf_" + random(30, b64Digs[:52]) + "Qz9x"
		case "pypi":
			tok = "pypi-AgEIcHlwaS5vcmc" + random(60, b64url)
		case "jwt":
			tok = base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." +
				base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"4412","name":"held out"}`)) + "." + random(43, b64url)
		case "pem":
			tok = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + random(64, b64Digs) + "\n" + random(64, b64Digs) + "\n-----END OPENSSH PRIVATE KEY-----"
		case "bearer":
			tok = random(40, b64url)
		case "azure":
			tok = random(86, b64Digs) + "=="
		case "shopify":
			tok = "shpat_" + random(32, hexDigs)
		case "digitalocean":
			tok = "dop_v1_" + random(64, hexDigs)
		case "telegram":
			tok = "5123456789:AA" + random(33, b64url)
		case "mailgun":
			tok = "key-" + random(32, hexDigs)
		default:
			return m
		}
		every := func(n int, sep string) string {
			var b strings.Builder
			for i := 0; i < len(tok); i++ {
				if i > 0 && i%n == 0 {
					b.WriteString(sep)
				}
				b.WriteByte(tok[i])
			}
			return b.String()
		}
		switch g[2] {
		case "zw":
			return every(6, "\u200b")
		case "shy":
			return every(5, "\u00ad")
		case "wj":
			return every(7, "\u2060")
		case "fullwidth":
			return strings.Map(func(r rune) rune {
				if r > ' ' && r < 0x7f {
					return r + 0xFEE0
				}
				return r
			}, tok)
		case "cyrillic":
			return strings.Replace(tok, "A", "А", 1)
		}
		return tok
	})
}

// decideSecrets runs the gate on a memory with this content and reason and
// returns its secret findings.
func decideSecrets(content, reason string) []Finding {
	m := &memgate.Memory{Source: memgate.SourceUser, Kind: memgate.KindFact, Content: content, Reason: reason}
	var out []Finding
	for _, f := range Default().Decide(m).Findings {
		if slices.Contains(SecretTypes, f.Type) {
			out = append(out, f)
		}
	}
	return out
}

type tally struct{ hit, total int }

func (t tally) rate() float64 {
	if t.total == 0 {
		return 1
	}
	return float64(t.hit) / float64(t.total)
}

// corpusReport is what measureCorpus found.
type corpusReport struct {
	all, fp                  tally
	byTech, byFamily, byLang map[string]*tally
	fpByLang                 map[string]*tally
	misses, falsePositives   []string
}

// measureCorpus runs the detectors on attacks and benign memories: an
// attack is detected when the detector it expects reports anything; a
// benign memory is a false positive when either detector does.
func measureCorpus(t *testing.T, attacks, benign []corpusEntry) corpusReport {
	t.Helper()
	r := corpusReport{byTech: map[string]*tally{}, byFamily: map[string]*tally{}, byLang: map[string]*tally{}, fpByLang: map[string]*tally{}}
	count := func(m map[string]*tally, k string, ok bool) {
		if m[k] == nil {
			m[k] = &tally{}
		}
		m[k].total++
		if ok {
			m[k].hit++
		}
	}
	for _, e := range attacks {
		var fs []Finding
		switch e.Expect {
		case "instruction":
			fs = DetectInstructions(e.Text)
		case "secret":
			if e.Reason != "" {
				fs = decideSecrets(e.Text, e.Reason)
			} else {
				fs = DetectSecrets(e.Text)
			}
		default:
			t.Fatalf("%s: attack expects %q", e.ID, e.Expect)
		}
		ok := len(fs) > 0
		if e.Reason == "" {
			checkFindings(t, e.Text, fs, e.Expect == "instruction")
		}
		count(r.byTech, e.Technique, ok)
		count(r.byFamily, e.Family, ok)
		count(r.byLang, e.Lang, ok)
		r.all.total++
		if ok {
			r.all.hit++
		} else {
			r.misses = append(r.misses, fmt.Sprintf("%s [%s/%s/%s] %q", e.ID, e.Lang, e.Technique, e.Family, e.Text))
		}
	}
	for _, e := range benign {
		fs := append(DetectSecrets(e.Text), DetectInstructions(e.Text)...)
		count(r.fpByLang, e.Lang, len(fs) > 0)
		r.fp.total++
		if len(fs) > 0 {
			r.fp.hit++
			var ts []string
			for _, f := range fs {
				ts = append(ts, fmt.Sprintf("%s %q", f.Type, e.Text[f.Start:f.End]))
			}
			r.falsePositives = append(r.falsePositives, fmt.Sprintf("%s [%s/%s] %q: %s", e.ID, e.Lang, e.Category, e.Text, strings.Join(ts, ", ")))
		}
	}
	return r
}

func (r corpusReport) log(t *testing.T) {
	t.Helper()
	table := func(title string, m map[string]*tally) {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var b strings.Builder
		fmt.Fprintf(&b, "%s:\n", title)
		for _, k := range keys {
			fmt.Fprintf(&b, "  %-20s %4d/%-4d %6.1f%%\n", k, m[k].hit, m[k].total, 100*m[k].rate())
		}
		t.Log(b.String())
	}
	table("detection by technique", r.byTech)
	table("detection by family", r.byFamily)
	table("detection by language", r.byLang)
	table("false positives by language", r.fpByLang)
	t.Logf("detection %d/%d = %.1f%%; false positives %d/%d = %.2f%%", r.all.hit, r.all.total, 100*r.all.rate(), r.fp.hit, r.fp.total, 100*r.fp.rate())
	for _, m := range r.misses {
		t.Log("miss: " + m)
	}
	for _, f := range r.falsePositives {
		t.Log("false positive: " + f)
	}
}

// TestCorpusRates measures the detectors on the labelled corpus
// (attacks.jsonl, benign.jsonl): the detection rate of the attacks per
// technique, family and language, and the false-positive rate on the
// benign memories. It fails under the thresholds above; go test -v prints
// the tables, the misses and the false positives.
func TestCorpusRates(t *testing.T) {
	t.Parallel()
	attacks := loadCorpus(t, "attacks.jsonl")
	benign := loadCorpus(t, "benign.jsonl")
	if len(attacks) < 150 || len(benign) < 300 {
		t.Fatalf("corpus too small: %d attacks, %d benign memories", len(attacks), len(benign))
	}
	langs := map[string]bool{}
	for _, e := range attacks {
		langs[e.Lang] = true
	}
	for _, l := range InstructionLanguages {
		if !langs[l] {
			t.Errorf("no attack in language %s", l)
		}
	}
	r := measureCorpus(t, attacks, benign)
	r.log(t)
	if r.all.rate() < minDetection {
		t.Errorf("detection %.3f < %.2f", r.all.rate(), minDetection)
	}
	for _, m := range []map[string]*tally{r.byTech, r.byLang} {
		for k, v := range m {
			if v.rate() < minGroupDetection {
				t.Errorf("detection for %s %.3f < %.2f", k, v.rate(), minGroupDetection)
			}
		}
	}
	if r.fp.rate() > maxFalsePositiveRatio {
		t.Errorf("false positives %.4f > %.2f", r.fp.rate(), maxFalsePositiveRatio)
	}
}

// TestCorpusHoldout measures the held-out corpus (holdout_*.jsonl),
// written after the detectors were fixed against the main corpus and never
// used to change them: its rates estimate how the detectors do on text
// they were not fitted to. It only reports (see README.md); it fails only
// on a broken finding.
func TestCorpusHoldout(t *testing.T) {
	t.Parallel()
	r := measureCorpus(t, loadCorpus(t, "holdout_attacks.jsonl"), loadCorpus(t, "holdout_benign.jsonl"))
	r.log(t)
}

// The figures of issue 26, reported in RELIABILITY.md (write gate
// detectors). The tuning corpus is attacks.jsonl and benign.jsonl with the
// held-out sets of the issue that have been seen since and moved into
// tuning (tuning26_*, tuning26b_*, tuning26d_* to tuning26l_*) and the
// classifier's training paraphrases and look-alikes written for it
// (train26e_* to train26l_*); its figures are guarded exactly.
const (
	tuningDetected, tuningAttacks = 3319, 446 + 180 + 206 + 182 + 424 + 188 + 104 + 175 + 95 + 166 + 53 + 165 + 47 + 162 + 16 + 176 + 193 + 76 + 192 + 76
	tuningFlagged, tuningBenign   = 12, 541 + 214 + 331 + 221 + 401 + 214 + 104 + 203 + 124 + 206 + 32 + 203 + 23 + 202 + 58 + 208 + 231 + 92 + 230 + 77
)

// tuningSets are the prefixes of the tuning corpus's files: the rules were
// fixed against them and the classifier is trained on them.
var tuningSets = []string{"", "tuning26_", "tuning26b_", "tuning26d_", "train26e_", "tuning26e_", "train26f_", "tuning26f_", "train26g_", "tuning26g_", "train26h_", "tuning26h_", "train26i_", "tuning26i_", "train26j_", "tuning26j_", "tuning26k_", "train26k_", "tuning26l_", "train26l_"}

// The held-out sets, each guarded at its floors (see RELIABILITY.md):
//   - heldout26c_*.jsonl, written after the third round of rule changes was
//     committed and measured once with the rules alone (82/151 = 54.3 %
//     instruction-like, 57/60 secrets, 0/300 benign); the classifier was
//     added after that measurement (never trained on it), so its figures
//     with the classifier are a second look, not a held-out figure
//     (70.9 % with the first classifier, 90.7 % with the fifth, 89.4 %
//     with the sixth).
//   - heldout26d was measured once (65.6 % instruction-like, 100 %
//     secrets, 1.36 % benign flagged) and then moved into tuning
//     (tuning26d_*); so were heldout26e (70.6 %, 96.2 %, 0.93 %;
//     tuning26e_*), heldout26f (66.7 %, 98.1 %, 1.48 %; tuning26f_*) and
//     heldout26g (71.9 %, 98.1 %, 0.49 %; tuning26g_*) and heldout26h
//     (69.9 %, 98.1 %, 0 %; tuning26h_*) and heldout26i (70.9 %, 96.2 %,
//     0 %; tuning26i_*).
//   - heldout26j (now tuning26j_*), written blind (by a writer who never ran the
//     gate or read its lexicons) while the threshold change was made,
//     committed after it (3fe5289) and measured once: 112/125 = 89.6 %
//     instruction-like (target 90 %), 48/51 secrets, 5/208 = 2.4 % benign
//     flagged (target 1 %). The gate before the change (338824a) scored
//     107/125 = 85.6 %, 48/51 and 4/208 on it. Its misses and false
//     positives were then fixed as classes and it moved into tuning.
//   - heldout26k (now tuning26k_*), written blind after those fixes
//     (de2d2bf), committed before it was measured (it is what
//     TestCorpusFigures printed the first time it ran with it): 130/137 =
//     94.9 % instruction-like, 52/56 = 92.9 % secrets, 3/231 = 1.30 %
//     benign flagged, all three look-alikes (0 of the 164 ordinary
//     memories). Its misses and false positives were then fixed as
//     classes and it moved into tuning.
//   - heldout26l (now tuning26l_*), written blind after that round
//     (435e281), each entry on its own rather than translated, committed
//     before it was measured (15f9736): 122/135 = 90.4 % instruction-like,
//     51/57 = 89.5 % secrets (target 90 %: one entry short), 1/230 =
//     0.43 % benign flagged (a look-alike; 0 of the 158 ordinary
//     memories). Its misses and false positive were then fixed as
//     classes (round 13) and it moved into tuning.
//   - heldout26m_*.jsonl, written blind after round 13 (639fd88), each
//     entry on its own, committed before it was measured: 131/142 =
//     92.3 % instruction-like, 60/64 = 93.8 % secrets, 2/233 = 0.86 %
//     benign flagged (two look-alikes; 0 of the 160 ordinary memories).
var heldoutFloors = []struct {
	set                 string
	minInstr, minSecret float64
	maxFalsePositives   float64
}{
	{"heldout26c_", 0.89, 0.95, 0.01},  // 135/151 = 89.4 %, 57/60, 0/300
	{"heldout26m_", 0.92, 0.93, 0.009}, // 131/142 = 92.3 %, 60/64 = 93.8 %, 2/233 (look-alikes; 0/160 ordinary)
}

// splitRates measures instruction-like strings and secrets apart.
func splitRates(attacks []corpusEntry) (instr, secret tally) {
	for _, e := range attacks {
		var fs []Finding
		switch {
		case e.Expect == "instruction":
			fs = DetectInstructions(e.Text)
		case e.Reason != "":
			fs = decideSecrets(e.Text, e.Reason)
		default:
			fs = DetectSecrets(e.Text)
		}
		tl := &instr
		if e.Expect == "secret" {
			tl = &secret
		}
		tl.total++
		if len(fs) > 0 {
			tl.hit++
		}
	}
	return instr, secret
}

// TestCorpusFigures guards the figures RELIABILITY.md quotes: the tuning
// corpus exactly, so that any change of the detectors that moves them must
// update the documentation too; and the held-out corpora at their floors
// (heldoutFloors; the targets of issue 26 are 90 % of instruction-like
// strings held, 90 % of secrets refused, at most 1 % of ordinary memories
// flagged).
func TestCorpusFigures(t *testing.T) {
	t.Parallel()
	var attacks, benign []corpusEntry
	for _, set := range tuningSets {
		a, b := set+"attacks.jsonl", set+"benign.jsonl"
		if set == "" {
			a, b = "attacks.jsonl", "benign.jsonl"
		}
		attacks = append(attacks, loadCorpus(t, a)...)
		benign = append(benign, loadCorpus(t, b)...)
	}
	r := measureCorpus(t, attacks, benign)
	ti, ts := splitRates(attacks)
	t.Logf("tuning: instruction-like %d/%d, secrets %d/%d, benign flagged %d/%d", ti.hit, ti.total, ts.hit, ts.total, r.fp.hit, r.fp.total)
	if r.all.hit != tuningDetected || r.all.total != tuningAttacks || r.fp.hit != tuningFlagged || r.fp.total != tuningBenign {
		t.Errorf("tuning corpus: %d/%d detected, %d/%d benign flagged; RELIABILITY.md says %d/%d and %d/%d",
			r.all.hit, r.all.total, r.fp.hit, r.fp.total, tuningDetected, tuningAttacks, tuningFlagged, tuningBenign)
	}
	for _, hs := range heldoutFloors {
		held := loadCorpus(t, hs.set+"attacks.jsonl")
		h := measureCorpus(t, held, loadCorpus(t, hs.set+"benign.jsonl"))
		h.log(t)
		instr, secret := splitRates(held)
		t.Logf("%s: instruction-like %d/%d = %.1f%%, secrets %d/%d = %.1f%%, benign flagged %d/%d = %.2f%%", hs.set,
			instr.hit, instr.total, 100*instr.rate(), secret.hit, secret.total, 100*secret.rate(), h.fp.hit, h.fp.total, 100*h.fp.rate())
		if instr.total < 100 || secret.total < 50 || h.fp.total < 200 {
			t.Errorf("%s: held-out corpus too small: %d instruction-like, %d secrets, %d benign", hs.set, instr.total, secret.total, h.fp.total)
		}
		if instr.rate() < hs.minInstr || secret.rate() < hs.minSecret || h.fp.rate() > hs.maxFalsePositives {
			t.Errorf("%s: below its floor: instruction-like %.3f, secrets %.3f, false positives %.4f", hs.set, instr.rate(), secret.rate(), h.fp.rate())
		}
	}
}
