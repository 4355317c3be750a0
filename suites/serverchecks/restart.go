package serverchecks

import (
	"context"
	"crypto/rand"
	"net/http"

	. "github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/internal/report"
)

// restartChecks are the restart checks.
func restartChecks() []def {
	return []def{
		{id: "RESTART-404", body: func(ctx context.Context, e *env) {
			if len(e.target.Replicas) > 0 {
				e.Skip(report.NotApplicable, "not applicable to a replicated deployment (--replica-url): its sessions are meant to outlive one replica's restart (REPLICA-LOSS grades that)")
			}
			sid := e.connect(ctx, e.C)
			e.Logf("!! F-RESTART: restarting the target")
			e.Expect(e.target.Restart(ctx)).To(Succeed(), "restart the target")
			e.tr.CloseIdleConnections()
			e.expectEnvelope(ctx, sid)
			e.expectWorks(ctx, e.C, e.connect(ctx, e.C))
		}},

		{id: "RESTART-HINT", body: func(ctx context.Context, e *env) {
			stale := rand.Text()
			resp, err := e.C.Call(ctx, stale, "tools/list", nil)
			e.Expect(err).NotTo(HaveOccurred())
			e.Expect(resp.Status).To(Equal(http.StatusNotFound), "tools/list with stale session id")
			fresh := resp.SessionID()
			e.Expect(fresh).NotTo(BeEmpty(), "the 404 carries no new Mcp-Session-Id")
			e.Expect(fresh).NotTo(Equal(stale))
			e.Cleanup(func(ctx context.Context) { _, _ = e.C.Delete(ctx, fresh) })
			e.expectWorks(ctx, e.C, fresh)
		}},
	}
}
