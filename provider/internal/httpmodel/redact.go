package httpmodel

import (
	"strings"
	"unicode/utf8"
)

// maxQuote bounds a server message quoted in an error.
const maxQuote = 300

// quoteWindow is the shortest run of bytes sent whose presence in a server
// message keeps the message out of errors.
const quoteWindow = 12

// Redact returns msg fit to quote in an error: on one line, at most
// maxQuote bytes, secrets replaced, or a placeholder naming what was sent
// ("input", "request") when it quotes any of texts (one whole, or any run
// of quoteWindow bytes of one). A server that echoes part of a request in
// its error message (some do) then cannot carry memory content, a query, a
// prompt or a user's words into an error, a log or a response.
func Redact(msg string, texts, secrets []string, sent string) string {
	msg = strings.Join(strings.Fields(msg), " ")
	if msg == "" {
		return ""
	}
	for _, s := range secrets {
		if len(s) >= 4 {
			msg = strings.ReplaceAll(msg, s, "[redacted]")
		}
	}
	if quotes(msg, texts) {
		return "[the server's message is withheld: it quotes the " + sent + "]"
	}
	if len(msg) > maxQuote {
		cut := maxQuote
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	return msg
}

// quotes reports whether msg contains any text whole or any quoteWindow
// bytes of one. Texts are compared after the same whitespace folding as
// msg.
func quotes(msg string, texts []string) bool {
	windows := make(map[string]struct{}, len(msg))
	for i := 0; i+quoteWindow <= len(msg); i++ {
		windows[msg[i:i+quoteWindow]] = struct{}{}
	}
	for _, t := range texts {
		t = strings.Join(strings.Fields(t), " ")
		if t == "" {
			continue
		}
		if len(t) < quoteWindow {
			if strings.Contains(msg, t) {
				return true
			}
			continue
		}
		for i := 0; i+quoteWindow <= len(t); i++ {
			if _, ok := windows[t[i:i+quoteWindow]]; ok {
				return true
			}
		}
	}
	return false
}
