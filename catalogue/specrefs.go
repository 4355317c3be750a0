package catalogue

// Where each check's behaviour is written down: the specification's pages
// and sections, the tasks extension and the SEPs of 2026-07-28, and the
// resilience profile (docs/resilience.md) for the RES checks. A check's
// SpecRef is one of these, with a fragment where the page has several.
const (
	SpecTransports     = "https://modelcontextprotocol.io/specification/2025-11-25/basic/transports"
	SpecSessions       = SpecTransports + "#session-management"
	SpecVersion        = SpecTransports + "#protocol-version-header"
	SpecSecurity       = SpecTransports + "#security-warning"
	SpecListening      = SpecTransports + "#listening-for-messages-from-the-server"
	SpecMultiple       = SpecTransports + "#multiple-connections"
	SpecResumability   = SpecTransports + "#resumability-and-redelivery"
	SpecSending        = SpecTransports + "#sending-messages-to-the-server"
	SpecCancellation   = "https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/cancellation"
	SpecResponses      = "https://modelcontextprotocol.io/specification/2025-11-25/basic#responses"
	SpecErrorResponses = "https://modelcontextprotocol.io/specification/2025-11-25/basic#error-responses"
	SpecProgress       = "https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/progress"
	ResilienceProfile  = "docs/resilience.md#"
	SpecTasks          = "https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks"
	SpecExtTasks       = "https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md"
	// The sessionless revision.
	Spec26HTTP    = "https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http"
	Spec26Listen  = "https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions"
	Spec26Errors  = "https://modelcontextprotocol.io/specification/2026-07-28/basic#error-responses"
	SEP2575       = "https://modelcontextprotocol.io/seps/2575-stateless-mcp"
	SEP2663       = "https://modelcontextprotocol.io/seps/2663-tasks-extension"
	Spec26Legacy  = Spec26HTTP + "#earlier-streamable-http-revisions"
	Spec26Version = Spec26HTTP + "#protocol-version-header"
	Spec26Change  = "https://modelcontextprotocol.io/specification/2026-07-28/changelog"
	Spec26Compat  = "https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning#backward-compatibility-with-initialization-based-versions"
)
