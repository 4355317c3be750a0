package serverchecks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/big"

	. "github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// codeInvalidRequest is JSON-RPC's "Invalid Request" error code.
const codeInvalidRequest = -32600

// echoIDs are request ids that decoders commonly change: beyond 2^53 (the
// integers a float64 holds), a fraction, an integer beyond 64 bits, and
// strings (one of them numeric, one full of escapes).
var echoIDs = []string{
	`9007199254740993`,
	`1.5`,
	`123456789012345678901234567890`,
	`"mcp-conform id ü/1"`,
	`"9007199254740993"`,
	`"mcp-conform \"q\" \\ \t \u00e9 \ud83d\ude00 \u2028 /"`,
}

// jsonrpcChecks are the JSON-RPC checks.
func jsonrpcChecks() []def {
	return []def{
		{Entry: catalogue.Entry{ID: "JSONRPC-ID-ECHO", Level: catalogue.Should, Section: "jsonrpc", Revisions: catalogue.EveryRevision, Stateless: true, SpecRef: catalogue.SpecResponses,
			Summary: "A response carries its request's id exactly (2^53+1, 1.5, a 30-digit integer, strings with escapes), or the request is refused with -32600 whose id is that id or null, never another."},
			body: func(ctx context.Context, e *env) {
				send := e.idEchoRequests(ctx)
				for _, id := range echoIDs {
					what, resp := send(id)
					m, err := resp.Result()
					e.Expect(err).NotTo(HaveOccurred(), "%s: HTTP %d, no JSON-RPC answer", what, resp.Status)
					switch {
					case m.Error != nil && m.Error.Code == codeInvalidRequest && (sameID(id, m.ID) || isNull(m.ID)):
						// A refusal may carry the id, or null for a request
						// whose id it could not read; never another id.
						e.Logf("%s refused with %d (%s) and id %s: allowed", what, m.Error.Code, m.Error.Message, orNull(m.ID))
					case sameID(id, m.ID):
						e.Expect(m.Error).To(BeNil(), "%s", what)
					case m.Error != nil:
						e.Failf("%s was refused with error %d %q and id %s: an error carries its request's id, or null for an Invalid Request (%d) whose id could not be read",
							what, m.Error.Code, m.Error.Message, orNull(m.ID), codeInvalidRequest)
					default:
						e.Failf("%s was answered with id %s: a client matching answers by id never sees its answer (refuse such ids with %d instead)",
							what, orNull(m.ID), codeInvalidRequest)
					}
				}
			}},
	}
}

// idEchoRequests returns how the check sends a request with a raw id:
// ping on a session of the sessions' era (none on a stateless target),
// tools/list at 2026-07-28, which has neither initialize nor ping.
func (e *env) idEchoRequests(ctx context.Context) func(id string) (string, *wire.Response) {
	if e.modern() {
		return func(id string) (string, *wire.Response) {
			what := "tools/list with id " + id
			return what, e.modernDo(e.modernRequest(ctx, json.RawMessage(id), "tools/list", nil), what)
		}
	}
	sid := e.connect(ctx, e.C)
	return func(id string) (string, *wire.Response) {
		what := "ping with id " + id
		resp, err := e.C.Post(ctx, sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"ping"}`, id))
		e.Expect(err).NotTo(HaveOccurred(), "%s", what)
		return what, resp
	}
}

// isNull reports an id that is JSON null.
func isNull(id json.RawMessage) bool { return string(bytes.TrimSpace(id)) == "null" }

// sameID reports whether got is the id sent: the same string, or the same
// number exactly (1.5 and 1.50 are the same; 9007199254740992 is not
// 9007199254740993).
func sameID(sent string, got json.RawMessage) bool {
	got = bytes.TrimSpace(got)
	var s1, s2 string
	if json.Unmarshal([]byte(sent), &s1) == nil {
		return json.Unmarshal(got, &s2) == nil && s1 == s2
	}
	a, ok1 := new(big.Rat).SetString(sent)
	b, ok2 := new(big.Rat).SetString(string(got))
	return ok1 && ok2 && a.Cmp(b) == 0
}
