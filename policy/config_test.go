package policy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate"
)

func TestDefault(t *testing.T) {
	t.Parallel()
	c := Default()
	if err := c.Validate(); err != nil {
		t.Fatalf("Default().Validate() = %v", err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"assistant message", c.WriteAction("assistant", "message"), ActionAllow},
		{"assistant summary", c.WriteAction("assistant", "summary"), ActionAllow},
		{"assistant task", c.WriteAction("assistant", "task"), ActionAllow},
		{"assistant fact", c.WriteAction("assistant", "fact"), ActionPending},
		{"assistant preference", c.WriteAction("assistant", "preference"), ActionPending},
		{"tool fact", c.WriteAction("tool", "fact"), ActionPending},
		{"tool preference", c.WriteAction("tool", "preference"), ActionPending},
		{"tool task", c.WriteAction("tool", "task"), ActionAllow},
		{"user preference", c.WriteAction("user", "preference"), ActionAllow},
		{"verified_tool fact", c.WriteAction("verified_tool", "fact"), ActionAllow},
		{"system fact", c.WriteAction("system", "fact"), ActionAllow},
		{"import preference", c.WriteAction("import", "preference"), ActionAllow},
		{"unknown source", c.WriteAction("robot", "fact"), ActionReject},
		{"unknown kind", c.WriteAction("user", "diary"), ActionReject},
		{"message ttl", c.DefaultTTL("message"), 30 * 24 * time.Hour},
		{"task ttl", c.DefaultTTL("task"), 7 * 24 * time.Hour},
		{"fact ttl", c.DefaultTTL("fact"), time.Duration(0)},
		{"preference ttl", c.DefaultTTL("preference"), time.Duration(0)},
		{"summary ttl", c.DefaultTTL("summary"), time.Duration(0)},
		{"message cap", c.RetentionCap("message"), 10000},
		{"task cap", c.RetentionCap("task"), 1000},
		{"summary cap", c.RetentionCap("summary"), 1000},
		{"fact cap", c.RetentionCap("fact"), 0},
		{"secret from user", c.SecretAction("user"), ActionReject},
		{"secret from import", c.SecretAction("import"), ActionReject},
		{"secret from unknown", c.SecretAction("robot"), ActionReject},
		{"instruction from user", c.InstructionAction("user"), ActionFlag},
		{"instruction from system", c.InstructionAction("system"), ActionFlag},
		{"instruction from assistant", c.InstructionAction("assistant"), ActionPending},
		{"instruction from tool", c.InstructionAction("tool"), ActionPending},
		{"instruction from verified_tool", c.InstructionAction("verified_tool"), ActionPending},
		{"instruction from import", c.InstructionAction("import"), ActionPending},
		{"instruction from unknown", c.InstructionAction("robot"), ActionPending},
		{"dedup", c.Dedup(), true},
		{"limits", c.Limits, memgate.Limits{}.WithDefaults()},
	}
	for _, ck := range checks {
		if !reflect.DeepEqual(ck.got, ck.want) {
			t.Errorf("%s = %v, want %v", ck.name, ck.got, ck.want)
		}
	}
}

func TestWithDefaults(t *testing.T) {
	t.Parallel()
	if got := (Config{}).WithDefaults(); !reflect.DeepEqual(got, Default()) {
		t.Errorf("Config{}.WithDefaults() = %+v, want Default()", got)
	}
	in := Config{
		Write:  map[memgate.Source]map[memgate.Kind]Action{"tool": {"task": ActionPending}},
		TTL:    map[memgate.Kind]time.Duration{"fact": time.Hour},
		Secret: map[memgate.Source]Action{"import": ActionFlag},
	}
	out := in.WithDefaults()
	if out.Write["tool"]["task"] != ActionPending || out.Write["tool"]["message"] != ActionAllow || out.Write["tool"]["fact"] != ActionPending {
		t.Errorf("write row not merged: %v", out.Write["tool"])
	}
	if out.TTL["fact"] != time.Hour || out.TTL["message"] != DefaultMessageTTL {
		t.Errorf("ttl not merged: %v", out.TTL)
	}
	if out.Secret["import"] != ActionFlag || out.Secret["user"] != ActionReject {
		t.Errorf("secret not merged: %v", out.Secret)
	}
	if len(in.Write["tool"]) != 1 || len(in.TTL) != 1 || len(in.Secret) != 1 {
		t.Errorf("WithDefaults modified its receiver's maps")
	}
	// The accessors of a sparse config answer like its WithDefaults.
	if in.WriteAction("tool", "message") != ActionAllow || in.DefaultTTL("message") != DefaultMessageTTL {
		t.Errorf("accessors do not fall back to defaults")
	}
	// Default hands out fresh maps: changing one does not change the next.
	d := Default()
	d.Write["user"]["fact"] = ActionReject
	if Default().Write["user"]["fact"] != ActionAllow || builtin.Write["user"]["fact"] != ActionAllow {
		t.Errorf("Default shares its maps")
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		cfg   Config
		field string
	}{
		{"empty", Config{}, ""},
		{"unknown source", Config{Write: map[memgate.Source]map[memgate.Kind]Action{"robot": {"fact": ActionAllow}}}, "write.robot"},
		{"unknown kind", Config{Write: map[memgate.Source]map[memgate.Kind]Action{"user": {"diary": ActionAllow}}}, "write.user.diary"},
		{"flag is not a write action", Config{Write: map[memgate.Source]map[memgate.Kind]Action{"user": {"fact": ActionFlag}}}, "write.user.fact"},
		{"empty write action", Config{Write: map[memgate.Source]map[memgate.Kind]Action{"user": {"fact": ""}}}, "write.user.fact"},
		{"negative ttl", Config{TTL: map[memgate.Kind]time.Duration{"task": -time.Hour}}, "ttl.task"},
		{"ttl unknown kind", Config{TTL: map[memgate.Kind]time.Duration{"diary": time.Hour}}, "ttl.diary"},
		{"negative retention", Config{Retention: map[memgate.Kind]int{"message": -1}}, "retention.message"},
		{"negative limit", Config{Limits: memgate.Limits{MaxContentBytes: -1}}, "limits.max_content_bytes"},
		{"huge limit", Config{Limits: memgate.Limits{MaxReasonBytes: 1 << 30}}, "limits.max_reason_bytes"},
		{"bad secret action", Config{Secret: map[memgate.Source]Action{"tool": "drop"}}, "findings.secret.tool"},
		{"bad instruction source", Config{Instruction: map[memgate.Source]Action{"bot": ActionFlag}}, "findings.instruction.bot"},
		{"flag is a finding action", Config{Instruction: map[memgate.Source]Action{"tool": ActionFlag}}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.cfg.Validate()
			if tc.field == "" {
				if err != nil {
					t.Fatalf("Validate() = %v", err)
				}
				return
			}
			if memgate.ErrorCode(err) != memgate.EINVALID || memgate.ErrorField(err) != tc.field {
				t.Fatalf("Validate() = %v (field %q), want invalid_argument on %q", err, memgate.ErrorField(err), tc.field)
			}
		})
	}
}

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		file  string
		check func(t *testing.T, c Config)
		err   string // substring of the error; "" for success
	}{
		{"empty object is the default", `{}`, func(t *testing.T, c Config) {
			if !reflect.DeepEqual(c, Default()) {
				t.Errorf("got %+v", c)
			}
		}, ""},
		{"partial override keeps the rest", `{"write": {"tool": {"task": "pending"}}, "ttl": {"message": "14d"}, "retention": {"fact": 500}}`, func(t *testing.T, c Config) {
			if c.Write["tool"]["task"] != ActionPending || c.Write["tool"]["message"] != ActionAllow || c.Write["tool"]["fact"] != ActionPending || c.Write["user"]["fact"] != ActionAllow {
				t.Errorf("write %v", c.Write)
			}
			if c.TTL["message"] != 14*24*time.Hour || c.TTL["task"] != DefaultTaskTTL {
				t.Errorf("ttl %v", c.TTL)
			}
			if c.Retention["fact"] != 500 || c.Retention["message"] != DefaultMessageRetention {
				t.Errorf("retention %v", c.Retention)
			}
		}, ""},
		{"wildcards with overrides", `{"write": {"*": {"*": "pending"}, "user": {"*": "allow", "fact": "reject"}}}`, func(t *testing.T, c Config) {
			if c.Write["tool"]["message"] != ActionPending || c.Write["user"]["message"] != ActionAllow || c.Write["user"]["fact"] != ActionReject {
				t.Errorf("write %v", c.Write)
			}
		}, ""},
		{"finding shorthand and table", `{"findings": {"secret": "pending", "instruction": {"verified_tool": "flag"}}}`, func(t *testing.T, c Config) {
			if c.Secret["tool"] != ActionPending || c.Secret["user"] != ActionPending {
				t.Errorf("secret %v", c.Secret)
			}
			if c.Instruction["verified_tool"] != ActionFlag || c.Instruction["tool"] != ActionPending || c.Instruction["user"] != ActionFlag {
				t.Errorf("instruction %v", c.Instruction)
			}
		}, ""},
		{"ttl forms", `{"ttl": {"message": "none", "task": "48h", "fact": "0", "summary": "90m"}}`, func(t *testing.T, c Config) {
			if c.TTL["message"] != 0 || c.TTL["task"] != 48*time.Hour || c.TTL["fact"] != 0 || c.TTL["summary"] != 90*time.Minute {
				t.Errorf("ttl %v", c.TTL)
			}
		}, ""},
		{"limits and dedup", `{"limits": {"max_content_bytes": 4096}, "dedup": false}`, func(t *testing.T, c Config) {
			if c.Limits.MaxContentBytes != 4096 || c.Limits.MaxMetadataBytes != memgate.DefaultMaxMetadataBytes || c.Dedup() {
				t.Errorf("limits %+v dedup %v", c.Limits, c.Dedup())
			}
		}, ""},
		{"zero limit means default", `{"limits": {"max_reason_bytes": 0}}`, func(t *testing.T, c Config) {
			if c.Limits.MaxReasonBytes != memgate.DefaultMaxReasonBytes {
				t.Errorf("limits %+v", c.Limits)
			}
		}, ""},
		{"nulls change nothing", `{"write": null, "findings": {"secret": null}, "dedup": null}`, func(t *testing.T, c Config) {
			if !reflect.DeepEqual(c, Default()) {
				t.Errorf("got %+v", c)
			}
		}, ""},
		{"unknown top-level field", `{"writes": {}}`, nil, `unknown field "writes"`},
		{"unknown limits field", `{"limits": {"max_content": 1}}`, nil, `unknown field "max_content"`},
		{"unknown findings field", `{"findings": {"secrets": "reject"}}`, nil, `unknown field "secrets"`},
		{"unknown source", `{"write": {"asistant": {"fact": "allow"}}}`, nil, "write.asistant: unknown source"},
		{"unknown kind", `{"write": {"user": {"facts": "allow"}}}`, nil, "write.user.facts: unknown kind"},
		{"unknown action", `{"write": {"user": {"fact": "maybe"}}}`, nil, `write.user.fact: unknown action "maybe"`},
		{"flag as a write action", `{"write": {"user": {"fact": "flag"}}}`, nil, "write.user.fact"},
		{"unknown finding source", `{"findings": {"instruction": {"robot": "flag"}}}`, nil, "findings.instruction.robot: unknown source"},
		{"bad ttl", `{"ttl": {"task": "soon"}}`, nil, "ttl.task: must be none or a positive duration"},
		{"negative ttl", `{"ttl": {"task": "-1h"}}`, nil, "ttl.task"},
		{"ttl of unknown kind", `{"ttl": {"tasks": "1h"}}`, nil, "ttl.tasks: unknown kind"},
		{"negative retention", `{"retention": {"task": -5}}`, nil, "retention.task"},
		{"negative limit", `{"limits": {"max_content_bytes": -1}}`, nil, "limits.max_content_bytes"},
		{"wrong type", `{"retention": {"task": "many"}}`, nil, "wrong type"},
		{"bad finding table", `{"findings": {"secret": 3}}`, nil, "must be an action or an object"},
		{"not an object", `[]`, nil, "wrong type"},
		{"syntax error", `{"write": `, nil, "policy"},
		{"trailing data", `{} {}`, nil, "data after the JSON object"},
		{"empty file", ``, nil, "is empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := Parse([]byte(tc.file))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Parse error %v, want one containing %q", err, tc.err)
				}
				if memgate.ErrorCode(err) != memgate.EINVALID {
					t.Errorf("error code %q", memgate.ErrorCode(err))
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if err := c.Validate(); err != nil {
				t.Fatalf("parsed config does not validate: %v", err)
			}
			tc.check(t, c)
		})
	}
}

func TestMarshalRoundTrip(t *testing.T) {
	t.Parallel()
	c, err := Parse([]byte(`{"write": {"tool": {"*": "reject"}}, "ttl": {"task": "36h", "fact": "400d"}, "dedup": false, "findings": {"instruction": "flag"}}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(b)
	if err != nil {
		t.Fatalf("Parse(Marshal(c)): %v\n%s", err, b)
	}
	if !reflect.DeepEqual(back, c) {
		t.Errorf("round trip changed the policy:\n%+v\n%+v", c, back)
	}
	if !strings.Contains(string(b), `"fact":"400d"`) || !strings.Contains(string(b), `"task":"36h0m0s"`) || !strings.Contains(string(b), `"dedup":false`) {
		t.Errorf("unexpected file form %s", b)
	}
}

func TestUnmarshalInsideLargerConfig(t *testing.T) {
	t.Parallel()
	var outer struct {
		Policy Config `json:"policy"`
	}
	if err := json.Unmarshal([]byte(`{"policy": {"ttl": {"task": "1d"}}}`), &outer); err != nil {
		t.Fatal(err)
	}
	if outer.Policy.DefaultTTL("task") != 24*time.Hour || outer.Policy.DefaultTTL("message") != DefaultMessageTTL {
		t.Errorf("ttl %v", outer.Policy.TTL)
	}
	err := json.Unmarshal([]byte(`{"policy": {"tll": {}}}`), &outer)
	if err == nil || !strings.Contains(err.Error(), `unknown field "tll"`) {
		t.Errorf("unknown nested field: %v", err)
	}
}

func TestLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "policy.json")
	if err := os.WriteFile(path, []byte(`{"retention": {"message": 50}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if c.RetentionCap("message") != 50 || c.RetentionCap("task") != DefaultTaskRetention {
		t.Errorf("retention %v", c.Retention)
	}
	if _, err := Load(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("Load of a missing file succeeded")
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"ttl": {"mesage": "1d"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Load(bad)
	if err == nil || !strings.Contains(err.Error(), "bad.json") || memgate.ErrorField(err) != "ttl.mesage" {
		t.Errorf("Load(bad) = %v, want an error naming the file and ttl.mesage", err)
	}
}

func FuzzLoad(f *testing.F) {
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"write": {"*": {"*": "pending"}, "user": {"fact": "allow"}}, "ttl": {"message": "14d"}}`))
	f.Add([]byte(`{"findings": {"secret": "flag", "instruction": {"tool": "reject"}}, "limits": {"max_content_bytes": 100}, "dedup": false}`))
	f.Add([]byte(`{"retention": {"task": 5}, "ttl": {"task": "none"}}`))
	f.Add([]byte(`{"write": null} `))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err != nil {
			if memgate.ErrorCode(err) != memgate.EINVALID {
				t.Fatalf("error without invalid_argument code: %v", err)
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("Parse accepted an invalid policy: %v", err)
		}
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		back, err := Parse(b)
		if err != nil || !reflect.DeepEqual(back, c) {
			t.Fatalf("round trip: %v\n%s", err, b)
		}
	})
}

// TestRevokeAnySource: the revoke rule is on by default, a policy file
// turns it off, and the setting survives MarshalJSON and Parse.
func TestRevokeAnySource(t *testing.T) {
	if !Default().RevokeNeedsClaim() {
		t.Fatal("the default policy lets an agent revoke any source")
	}
	c, err := Parse([]byte(`{"revoke": {"any_source": true}}`))
	if err != nil || c.RevokeNeedsClaim() {
		t.Fatalf("revoke.any_source true: needs claim %v, %v", c.RevokeNeedsClaim(), err)
	}
	b, err := c.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(b)
	if err != nil || back.RevokeNeedsClaim() {
		t.Fatalf("round trip of %s: needs claim %v, %v", b, back.RevokeNeedsClaim(), err)
	}
	if _, err := Parse([]byte(`{"revoke": {"anysource": true}}`)); err == nil {
		t.Fatal("an unknown revoke field was accepted")
	}
}
