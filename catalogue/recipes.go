package catalogue

// Recipe is where the fix for a failed check is written down for servers
// built on one SDK: a section of a page of docs/recipes.
type Recipe struct {
	// SDK names the SDK the recipe is proven on.
	SDK string `json:"sdk"`
	// Ref is the recipe's section, relative to the repository's root.
	Ref string `json:"ref"`
}

// recipePages are the pages of docs/recipes: each SDK's, with the section
// of each check it has a recipe for. A test keeps them equal to the
// pages' headings.
var recipePages = []struct {
	sdk, page string
	sections  map[string][]string // section anchor: the check IDs its heading names
}{
	{"TypeScript SDK 1.x", "docs/recipes/typescript-sdk.md", map[string][]string{
		"origin-403":      {"ORIGIN-403"},
		"jsonrpc-id-echo": {"JSONRPC-ID-ECHO"},
		"recreate-reinit-200-recreate-works-after-recreate-concurrent": {"RECREATE-REINIT-200", "RECREATE-WORKS-AFTER", "RECREATE-CONCURRENT"},
		"get-stale-replaced-get-live-replaced":                         {"GET-STALE-REPLACED", "GET-LIVE-REPLACED"},
		"get-primed-and-sse-retry-field":                               {"GET-PRIMED", "SSE-RETRY-FIELD"},
		"envelope-404-restart-404":                                     {"ENVELOPE-404", "RESTART-404"},
	}},
	{"TypeScript SDK 2.x", "docs/recipes/typescript-sdk-v2.md", map[string][]string{
		"jsonrpc-id-echo": {"JSONRPC-ID-ECHO"},
		"sse-priming":     {"SSE-PRIMING"},
	}},
	{"Go SDK", "docs/recipes/go-sdk.md", map[string][]string{
		"envelope-404-restart-404":                {"ENVELOPE-404", "RESTART-404"},
		"sess-missing-400":                        {"SESS-MISSING-400"},
		"grace-live-stream-grace-activity-resets": {"GRACE-LIVE-STREAM", "GRACE-ACTIVITY-RESETS"},
		"jsonrpc-id-echo":                         {"JSONRPC-ID-ECHO"},
		"jsonrpc-error-id":                        {"JSONRPC-ERROR-ID"},
		"recreate-reinit-200-recreate-state-kept-recreate-works-after-recreate-concurrent-recreate-inflight": {"RECREATE-REINIT-200", "RECREATE-STATE-KEPT", "RECREATE-WORKS-AFTER", "RECREATE-CONCURRENT", "RECREATE-INFLIGHT"},
		"get-stale-replaced-get-live-replaced-and-sse-retry-field":                                           {"GET-STALE-REPLACED", "GET-LIVE-REPLACED", "SSE-RETRY-FIELD"},
	}},
	{"mcp-go", "docs/recipes/mcp-go.md", map[string][]string{
		"origin-403":                        {"ORIGIN-403"},
		"sess-missing-400-sess-unknown-404": {"SESS-MISSING-400", "SESS-UNKNOWN-404"},
		"envelope-404-restart-404":          {"ENVELOPE-404", "RESTART-404"},
		"jsonrpc-id-echo":                   {"JSONRPC-ID-ECHO"},
		"recreate-reinit-200-recreate-state-kept-recreate-works-after-recreate-concurrent": {"RECREATE-REINIT-200", "RECREATE-STATE-KEPT", "RECREATE-WORKS-AFTER", "RECREATE-CONCURRENT"},
		"sse-retry-field-modern-sse-unbuffered-modern-last-event-id-ignored":               {"SSE-RETRY-FIELD", "MODERN-SSE-UNBUFFERED", "MODERN-LAST-EVENT-ID-IGNORED"},
	}},
}

// Recipes returns the recipes for check id, one per SDK that has one.
func Recipes(id string) []Recipe {
	var out []Recipe
	for _, p := range recipePages {
		for anchor, ids := range p.sections {
			for _, x := range ids {
				if x == id {
					out = append(out, Recipe{SDK: p.sdk, Ref: p.page + "#" + anchor})
				}
			}
		}
	}
	return out
}

// RecipePages returns each recipe page with its sections' anchors and the
// check IDs each names, for the test that holds them to the pages.
func RecipePages() map[string]map[string][]string {
	out := map[string]map[string][]string{}
	for _, p := range recipePages {
		out[p.page] = p.sections
	}
	return out
}
