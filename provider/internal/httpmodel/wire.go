package httpmodel

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
)

// ErrorWire reads one wire format's error answers.
type ErrorWire interface {
	// ErrorMessage extracts the server's message and machine code (either
	// may be empty) from an error body.
	ErrorMessage(body []byte) (msg, code string)
	// UnknownModel reports whether an error answer means the configured
	// model does not exist on the server.
	UnknownModel(status int, msg, code string) bool
}

// OpenAIEndpoint returns the URL of an endpoint of an OpenAI-compatible
// API: base, which includes /v1 (a URL without a path gets it, so
// http://localhost:8000 means http://localhost:8000/v1), joined with elem.
// base is not modified.
func OpenAIEndpoint(base *url.URL, elem ...string) *url.URL {
	u := *base
	if u.Path == "" {
		u.Path = "/v1"
	}
	return u.JoinPath(elem...)
}

// OpenAIErrors reads the error answers of the OpenAI API and the servers
// compatible with it, whichever endpoint answered: an EmbedWire or
// ChatWire embeds it.
type OpenAIErrors struct{}

var _ ErrorWire = OpenAIErrors{}

// ErrorMessage reads OpenAI's {"error":{"message","type","code"}} (the
// code, or the type when there is no code) and the {"error":"message"} of
// some compatible servers.
func (OpenAIErrors) ErrorMessage(body []byte) (string, string) {
	var r struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &r) != nil || len(r.Error) == 0 {
		return "", ""
	}
	var e struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    any    `json:"code"`
	}
	if json.Unmarshal(r.Error, &e) != nil {
		var s string
		if json.Unmarshal(r.Error, &s) == nil {
			return s, ""
		}
		return "", ""
	}
	code, _ := e.Code.(string)
	if code == "" {
		code = e.Type
	}
	return e.Message, code
}

// UnknownModel: OpenAI answers 404 model_not_found ("The model `x` does not
// exist or you do not have access to it."); vLLM and others 404 or 400 with
// a message naming the model as not existing or not found.
func (OpenAIErrors) UnknownModel(status int, msg, code string) bool {
	if code == "model_not_found" {
		return true
	}
	m := strings.ToLower(msg)
	named := strings.Contains(m, "model") && (strings.Contains(m, "does not exist") || strings.Contains(m, "not found"))
	return (status == http.StatusNotFound || status == http.StatusBadRequest) && named
}

// OllamaErrors reads the error answers of an Ollama server, whichever
// endpoint answered: an EmbedWire or ChatWire embeds it.
type OllamaErrors struct{}

var _ ErrorWire = OllamaErrors{}

// ErrorMessage reads Ollama's {"error":"message"}; Ollama sends no code.
func (OllamaErrors) ErrorMessage(body []byte) (string, string) {
	var r struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(body, &r) != nil {
		return "", ""
	}
	return r.Error, ""
}

// UnknownModel: Ollama answers 404 {"error":"model \"x\" not found, try
// pulling it first"} for a model it does not have.
func (OllamaErrors) UnknownModel(status int, msg, _ string) bool {
	m := strings.ToLower(msg)
	return status == http.StatusNotFound && strings.Contains(m, "model") && strings.Contains(m, "not found")
}
