package serverchecks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/big"

	. "github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/catalogue"
)

// codeInvalidRequest is JSON-RPC's "Invalid Request" error code.
const codeInvalidRequest = -32600

// echoIDs are request ids that decoders commonly change: beyond 2^53 (the
// integers a float64 holds), a fraction, an integer beyond 64 bits, and
// strings (one of them numeric).
var echoIDs = []string{
	`9007199254740993`,
	`1.5`,
	`123456789012345678901234567890`,
	`"mcp-conform id ü/1"`,
	`"9007199254740993"`,
}

// jsonrpcChecks are the JSON-RPC checks.
func jsonrpcChecks() []def {
	return []def{
		{Entry: catalogue.Entry{ID: "JSONRPC-ID-ECHO", Level: catalogue.Should, Section: "jsonrpc", Revisions: catalogue.WithSessions, Stateless: true, SpecRef: catalogue.SpecResponses,
			Summary: "A response carries its request's id exactly (2^53+1, 1.5, a 30-digit integer, a string), or the request is refused with -32600."},
			body: func(ctx context.Context, e *env) {
				sid := e.connect(ctx, e.C)
				for _, id := range echoIDs {
					body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"ping"}`, id)
					resp, err := e.C.Post(ctx, sid, body)
					e.Expect(err).NotTo(HaveOccurred(), "ping with id %s", id)
					m, err := resp.Result()
					e.Expect(err).NotTo(HaveOccurred(), "ping with id %s: HTTP %d, no JSON-RPC answer", id, resp.Status)
					switch {
					case m.Error != nil && m.Error.Code == codeInvalidRequest:
						// A refusal is allowed whatever id it carries: the id
						// echoed, or null for a request it could not read.
						e.Logf("ping with id %s refused with %d (%s) and id %s: allowed", id, m.Error.Code, m.Error.Message, m.ID)
					case sameID(id, m.ID):
						e.Expect(m.Error).To(BeNil(), "ping with id %s", id)
					case m.Error != nil:
						e.Failf("ping with id %s was refused with error %d %q and id %s: a request whose id cannot be echoed is an Invalid Request (%d)",
							id, m.Error.Code, m.Error.Message, m.ID, codeInvalidRequest)
					default:
						e.Failf("ping with id %s was answered with id %s: a client matching answers by id never sees its answer (refuse such ids with %d instead)",
							id, m.ID, codeInvalidRequest)
					}
				}
			}},
	}
}

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
