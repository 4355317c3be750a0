package serverchecks

import (
	"net/http"
	"testing"
)

// TestIDsThroughFloat64: numeric ids come back changed; strings do not.
func TestIDsThroughFloat64(t *testing.T) {
	t.Parallel()
	tg := serve(t, "ids-through-float64")
	sid := tg.connect(tg.c)
	for sent, want := range map[string]string{
		`9007199254740993`: `9007199254740992`,
		`1.5`:              `1`,
		`7`:                `7`,
		`"1.5"`:            `"1.5"`,
	} {
		resp := tg.send(tg.c, http.MethodPost, sid, `{"jsonrpc":"2.0","id":`+sent+`,"method":"ping"}`)
		m, err := resp.Result()
		if err != nil || m.Error != nil {
			t.Fatalf("ping with id %s: %v %+v", sent, err, m.Error)
		}
		if string(m.ID) != want {
			t.Errorf("ping with id %s answered with id %s, want %s", sent, m.ID, want)
		}
	}
}

// TestRefusesOddIDsEchoed: an id beyond 2^53 or a fraction gets -32600
// with the id echoed; a safe integer gets its answer.
func TestRefusesOddIDsEchoed(t *testing.T) {
	t.Parallel()
	tg := serve(t, "refuses-odd-ids-echoed")
	sid := tg.connect(tg.c)
	for id, refused := range map[string]bool{`9007199254740993`: true, `1.5`: true, `7`: false} {
		resp := tg.send(tg.c, http.MethodPost, sid, `{"jsonrpc":"2.0","id":`+id+`,"method":"ping"}`)
		m, err := resp.Result()
		if err != nil {
			t.Fatalf("ping with id %s: %v", id, err)
		}
		if string(m.ID) != id || (m.Error != nil) != refused || (refused && m.Error.Code != -32600) {
			t.Errorf("ping with id %s answered with id %s and error %+v; want the id echoed, refused=%v with -32600", id, m.ID, m.Error, refused)
		}
	}
}
