package serverchecks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/fixtures/servers"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// Fixtures that get JSON-RPC itself wrong.
func init() {
	servers.Register(
		servers.Fixture{
			Name: "ids-through-float64",
			About: "numeric request ids go through a float64 and an int64, as the Go SDK's did: " +
				"9007199254740993 is answered as 9007199254740992, 1.5 as 1",
			Breaks:       []string{"JSONRPC-ID-ECHO"},
			ModernBreaks: []string{"JSONRPC-ID-ECHO"},
			Wrap:         idsThroughFloat64,
		},
		servers.Fixture{
			Name: "error-ids-dropped",
			About: "the error answering a request of an unknown method (-32601) has no id member, " +
				"as jsonv-ts 0.10 answers it: a client matching answers by id never sees it",
			Breaks:       []string{"JSONRPC-ERROR-ID"},
			ModernBreaks: []string{"MODERN-ERROR-ID"},
			Wrap:         errorIDsDropped,
		},
		servers.Fixture{
			Name:   "notifications-204",
			About:  "a notification is answered 204 No Content instead of 202 Accepted, so every handshake's notifications/initialized is: accepted all the same, so only JSONRPC-NOTIFY-202 fails",
			Breaks: []string{"JSONRPC-NOTIFY-202"},
			Wrap:   notifications204,
		},
		servers.Fixture{
			Name:     "initialized-refused",
			About:    "notifications/initialized is answered 400 Bad Request (the session is made all the same): every handshake fails",
			Breaks:   []string{"JSONRPC-NOTIFY-202"},
			Premises: []catalogue.Premise{catalogue.PremiseHandshake},
			Wrap:     initializedRefused,
		},
		servers.Fixture{
			Name: "refuses-odd-ids-rounded",
			About: "a numeric request id that is not a safe integer is refused with -32600, " +
				"as JSONRPC-ID-ECHO allows, but the error carries the id rounded through a float64 (9007199254740992 for 9007199254740993)",
			Breaks:       []string{"JSONRPC-ID-ECHO"},
			ModernBreaks: []string{"JSONRPC-ID-ECHO"},
			Wrap:         refusesOddIDsRounded,
		},
		servers.Fixture{
			Name: "refuses-odd-ids-echoed",
			About: "a numeric request id that is not a safe integer (9007199254740993, 1.5) is refused with -32600 " +
				"that echoes the id, as JSONRPC-ID-ECHO allows: it breaks nothing",
			Wrap: refusesOddIDs,
		},
	)
}

// notifications204 answers every notification 204 No Content, after the
// reference has handled it.
func notifications204(next http.Handler, _ server.Config) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m := servers.PeekRPC(r); r.Method == http.MethodPost && m.Method != "" && len(m.ID) == 0 {
			next.ServeHTTP(httptest.NewRecorder(), r)
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// initializedRefused answers notifications/initialized with 400, after
// the reference took it.
func initializedRefused(next http.Handler, _ server.Config) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m := servers.PeekRPC(r); r.Method == http.MethodPost && m.Method == "notifications/initialized" {
			next.ServeHTTP(httptest.NewRecorder(), r)
			http.Error(w, "initialized refused", http.StatusBadRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// refusesOddIDs answers a request whose numeric id is not an integer a
// float64 holds exactly with -32600 carrying that same id.
func refusesOddIDs(next http.Handler, _ server.Config) http.Handler {
	return refusingOddIDs(next, func(id string) string { return id })
}

// errorIDsDropped removes the id of the errors for an unknown method.
func errorIDsDropped(next http.Handler, _ server.Config) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		servers.ServeWith(next, w, r, func(ew *servers.EventWriter) {
			servers.RewriteMessages(ew, func(m map[string]json.RawMessage) {
				var e struct{ Code int }
				if json.Unmarshal(m["error"], &e) == nil && e.Code == codeMethodNotFound {
					delete(m, "id")
				}
			})
		})
	})
}

// refusesOddIDsRounded is refusesOddIDs with the id the error carries
// rounded: int64(float64(id)).
func refusesOddIDsRounded(next http.Handler, _ server.Config) http.Handler {
	return refusingOddIDs(next, func(id string) string {
		f, _ := strconv.ParseFloat(id, 64)
		return strconv.FormatInt(int64(f), 10)
	})
}

// refusingOddIDs refuses a request whose numeric id is not a safe
// integer with -32600, whose id is echo(the request's id).
func refusingOddIDs(next http.Handler, echo func(id string) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m := servers.PeekRPC(r)
		if len(m.ID) > 0 && m.ID[0] != '"' && string(m.ID) != "null" && !safeInteger(string(m.ID)) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32600,"message":"Invalid Request: id must be a safe integer"}}`, echo(string(m.ID)))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// safeInteger reports whether a JSON number is an integer of at most 2^53.
func safeInteger(n string) bool {
	i, err := strconv.ParseInt(n, 10, 64)
	return err == nil && i <= 1<<53 && i >= -(1<<53)
}

// idsThroughFloat64 replaces a request's numeric id by int64(float64(id))
// before the reference server (which would refuse the id) sees it, so the
// answer carries that id.
func idsThroughFloat64(next http.Handler, _ server.Config) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m := servers.PeekRPC(r); len(m.ID) > 0 && m.ID[0] != '"' && string(m.ID) != "null" {
			if f, err := strconv.ParseFloat(string(m.ID), 64); err == nil {
				setID(r, strconv.FormatInt(int64(f), 10))
			}
		}
		next.ServeHTTP(w, r)
	})
}

// setID rewrites the id of the single JSON-RPC message in r's body.
func setID(r *http.Request, id string) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) == nil {
		m["id"] = json.RawMessage(id)
		if out, err := json.Marshal(m); err == nil {
			body = out
		}
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
}
