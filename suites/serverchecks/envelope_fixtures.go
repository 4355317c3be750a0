package serverchecks

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sync"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/fixtures/servers"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// Fixtures that answer an unknown or stale session id unhelpfully.
func init() {
	servers.Register(
		servers.Fixture{
			Name:      "plain-404",
			About:     "an unknown session id gets a plain -32001 404, not the -32003 envelope",
			Breaks:    []string{"ENVELOPE-404", "RESUME-TOKEN-OWNER"},
			Premises:  []catalogue.Premise{catalogue.PremiseEnvelope},
			Configure: func(c *server.Config) { c.ExpiredResponse = server.ExpiredPlain },
		},
		servers.Fixture{
			Name:   "resume-hint-wrong-arg",
			About:  `the envelope's data.resume.via names "token", an argument job_start does not have`,
			Breaks: []string{"ENVELOPE-RESUME-HINT"},
			Wrap:   resumeHintWrongArg,
		},
		servers.Fixture{
			Name:   "resume-tokens-unbound",
			About:  "resume tokens are not bound to the principal they were issued to: job_start continues another principal's conversation with its stolen resume_token",
			Breaks: []string{"RESUME-TOKEN-OWNER"},
			Wrap:   resumeTokensUnbound,
		},
		servers.Fixture{
			Name:      "no-recovery-hint",
			About:     "recovery-hint mode is off: a stale id gets a 404 without a new Mcp-Session-Id",
			Breaks:    []string{"RESTART-HINT"},
			Configure: func(c *server.Config) { c.RecoveryHint = false },
		},
	)
}

func resumeHintWrongArg(next http.Handler, _ server.Config) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		servers.ServeWith(next, w, r, func(ew *servers.EventWriter) {
			ew.OnBody = func(p []byte) []byte {
				return bytes.ReplaceAll(p, []byte(`"via":"resume_token"`), []byte(`"via":"token"`))
			}
		})
	})
}

// resumeTokensUnbound notes the session and principal each resume token
// was issued to, and serves a call that presents another principal's
// token as its owner, on the owner's session (the answer shows the
// caller's session id).
func resumeTokensUnbound(next http.Handler, _ server.Config) http.Handler {
	type issued struct{ sid, auth string }
	var mu sync.Mutex
	owners := map[string]issued{} // resume token -> where it was issued
	note := func(sid, auth string, m []byte) {
		var msg struct {
			Result struct {
				Structured struct {
					Token string `json:"resume_token"`
				} `json:"structuredContent"`
			} `json:"result"`
		}
		if json.Unmarshal(m, &msg) == nil && msg.Result.Structured.Token != "" {
			mu.Lock()
			if _, ok := owners[msg.Result.Structured.Token]; !ok {
				owners[msg.Result.Structured.Token] = issued{sid, auth}
			}
			mu.Unlock()
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sid, auth := r.Header.Get(wire.HeaderSessionID), r.Header.Get("Authorization")
		if tok := presentedResumeToken(r); sid != "" && tok != "" {
			mu.Lock()
			o, ok := owners[tok]
			mu.Unlock()
			if ok && o.auth != auth {
				r.Header.Set(wire.HeaderSessionID, o.sid)
				r.Header.Set("Authorization", o.auth)
				servers.ServeWith(next, w, r, func(ew *servers.EventWriter) {
					ew.OnStatus = servers.RewriteSessionHeader(func(string) string { return sid })
				})
				return
			}
		}
		servers.ServeWith(next, w, r, func(ew *servers.EventWriter) {
			ew.OnEvent = func(ev []byte) []byte {
				if data := servers.ParseEvent(ev).Data; data != "" {
					note(sid, auth, []byte(data))
				}
				return ev
			}
			ew.OnBody = func(p []byte) []byte {
				note(sid, auth, p)
				return p
			}
		})
	})
}

// presentedResumeToken is the resume_token argument of a tools/call.
func presentedResumeToken(r *http.Request) string {
	var m struct {
		Method string `json:"method"`
		Params struct {
			Arguments struct {
				Token string `json:"resume_token"`
			} `json:"arguments"`
		} `json:"params"`
	}
	if json.Unmarshal(servers.PeekBody(r), &m) != nil || m.Method != "tools/call" {
		return ""
	}
	return m.Params.Arguments.Token
}
