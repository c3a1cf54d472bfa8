package server_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate/httpapi"
	"github.com/memgate/memgate/server"
)

// selfSigned writes a certificate for 127.0.0.1 and its key, returning
// their paths and a pool that trusts it.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "memgate test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// start runs the server with cfg until the test ends; it returns the
// address it serves on and its output.
func start(t *testing.T, cfg server.Config) (addr string, stdout, stderr *lockedBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	stdout, stderr = &lockedBuffer{}, &lockedBuffer{}
	cfg.DB = filepath.Join(t.TempDir(), "m.db")
	cfg.BootstrapTenant = "acme"
	cfg.Ready = func(a string) { ready <- a }
	done := make(chan error, 1)
	go func() { done <- server.Run(ctx, cfg, stdout, stderr) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("Run returned before serving: %v\n%s", err, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not become ready")
	}
	return addr, stdout, stderr
}

// Finding 11: with --tls-cert and --tls-key the server speaks HTTPS only.
func TestRunServesTLS(t *testing.T) {
	t.Parallel()
	certFile, keyFile, pool := selfSigned(t)
	addr, stdout, stderr := start(t, server.Config{Addr: "127.0.0.1:0", TLSCert: certFile, TLSKey: keyFile})
	if !strings.Contains(stdout.String(), "serving on https://"+addr) {
		t.Fatalf("stdout:\n%s", stdout.String())
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	res, err := client.Get("https://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("healthz over TLS: %d", res.StatusCode)
	}
	// Cleartext on the same port gets no API answer.
	if res, err := http.Get("http://" + addr + "/healthz"); err == nil {
		res.Body.Close()
		if res.StatusCode == http.StatusOK {
			t.Fatal("cleartext HTTP answered on the TLS listener")
		}
	}
	if strings.Contains(stderr.String(), "cleartext") {
		t.Fatalf("warned of cleartext while serving TLS:\n%s", stderr.String())
	}
}

// Finding 11: serving cleartext beyond loopback is warned of; on loopback
// it is not (the control).
func TestRunWarnsOfCleartextBeyondLoopback(t *testing.T) {
	t.Parallel()
	_, _, wide := start(t, server.Config{Addr: "0.0.0.0:0"})
	if !strings.Contains(wide.String(), "cleartext HTTP beyond loopback") {
		t.Fatalf("no warning serving cleartext on 0.0.0.0:\n%s", wide.String())
	}
	_, _, local := start(t, server.Config{Addr: "127.0.0.1:0"})
	if strings.Contains(local.String(), "cleartext") {
		t.Fatalf("warned on loopback:\n%s", local.String())
	}
}

func TestConfigRefusesHalfTLS(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]server.Config{
		"cert without key": {TLSCert: "c.pem"},
		"key without cert": {TLSKey: "k.pem"},
		"unknown metrics":  {Metrics: "sometimes"},
	} {
		if err := c.WithDefaults().Validate(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// Finding 11: --metrics-addr serves /metrics on a listener of its own and
// takes it off the API's.
func TestRunServesMetricsApart(t *testing.T) {
	t.Parallel()
	addr, _, stderr := start(t, server.Config{Addr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0"})
	m := regexp.MustCompile(`serving metrics.*?addr[=":]+(127\.0\.0\.1:\d+)`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("no metrics address in the log:\n%s", stderr.String())
	}
	res, err := http.Get("http://" + m[1] + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("metrics listener: %d", res.StatusCode)
	}
	res, err = http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Fatalf("the API's listener still serves /metrics: %d", res.StatusCode)
	}
}

// Issue 26 finding 7: beyond loopback, /metrics needs an admin key by
// default (its figures count forgets and key creations per route); on
// loopback it stays public (the control), and --metrics public is still
// honoured when asked for.
func TestRunMetricsNeedKeyBeyondLoopback(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, addr, metrics string
		want                int
	}{
		{"every interface", "0.0.0.0:0", "", http.StatusUnauthorized},
		{"loopback", "127.0.0.1:0", "", http.StatusOK},
		{"every interface, public asked for", "0.0.0.0:0", httpapi.MetricsPublic, http.StatusOK},
	} {
		addr, _, _ := start(t, server.Config{Addr: tc.addr, Metrics: tc.metrics})
		_, port, _ := net.SplitHostPort(addr)
		res, err := http.Get("http://127.0.0.1:" + port + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tc.want {
			t.Errorf("%s: GET /metrics without a key: %d, want %d", tc.name, res.StatusCode, tc.want)
		}
	}
	for addr, want := range map[string]string{
		"127.0.0.1:7070": httpapi.MetricsPublic, "localhost:7070": httpapi.MetricsPublic, "[::1]:7070": httpapi.MetricsPublic,
		"0.0.0.0:7070": httpapi.MetricsKey, ":7070": httpapi.MetricsKey, "10.0.0.7:7070": httpapi.MetricsKey, "[::]:7070": httpapi.MetricsKey,
	} {
		if got := (server.Config{Addr: addr}).WithDefaults().Metrics; got != want {
			t.Errorf("--addr %s: metrics %s by default, want %s", addr, got, want)
		}
	}
}

// Issue 26 finding 7: /openapi.json names the configured public URL, or
// the listen address, never the request's Host.
func TestRunOpenAPINamesPublicURL(t *testing.T) {
	t.Parallel()
	servers := func(addr, host string) string {
		t.Helper()
		req, err := http.NewRequest("GET", "http://"+addr+"/openapi.json", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var d struct {
			Servers []struct {
				URL string `json:"url"`
			} `json:"servers"`
		}
		if err := json.NewDecoder(res.Body).Decode(&d); err != nil || len(d.Servers) != 1 {
			t.Fatalf("openapi servers: %+v, %v", d, err)
		}
		return d.Servers[0].URL
	}
	addr, _, _ := start(t, server.Config{Addr: "127.0.0.1:0", PublicURL: "https://memgate.example.com/"})
	if got := servers(addr, "attacker.test"); got != "https://memgate.example.com" {
		t.Errorf("with --public-url: servers %q", got)
	}
	addr, _, _ = start(t, server.Config{Addr: "127.0.0.1:0"})
	if got := servers(addr, "attacker.test"); got != "http://"+addr {
		t.Errorf("without --public-url: servers %q, want the listen address http://%s", got, addr)
	}
	if err := (server.Config{PublicURL: "memgate.example.com"}).WithDefaults().Validate(); err == nil {
		t.Error("a public URL without a scheme was accepted")
	}
}
