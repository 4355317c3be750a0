package callcmd

import (
	"context"
	"crypto"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"

	"github.com/mcp-conform/mcp-conform/reference/client"
)

// defaultRedirect is where the browser comes back after authorizing:
// call listens there while the flow runs.
const defaultRedirect = "http://127.0.0.1:8976/callback"

// oauthFlags configure call's authorization flow.
type oauthFlags struct {
	on, headless                     bool
	redirect, clientID, clientSecret string
	clientMetadataURL                string
	// the grants without a user, and DPoP
	clientCredentials, dpop      bool
	privateKey, jwtBearer        string // files
	idToken, idpIssuer           string
	idpClientID, idpClientSecret string
	key                          crypto.Signer // the parsed --oauth-private-key
}

func (o *oauthFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&o.on, "oauth", false, "on a 401, run the MCP authorization flow (OAuth 2.1, PKCE); the tokens are kept in --state-dir and refreshed")
	fs.StringVar(&o.redirect, "oauth-redirect", defaultRedirect, "redirect URL registered for the flow; call listens there for the browser")
	fs.BoolVar(&o.headless, "oauth-headless", false, "take the code from the authorization server's redirect without a browser (servers that approve without a user)")
	fs.StringVar(&o.clientID, "oauth-client-id", "", "pre-registered OAuth client id")
	fs.StringVar(&o.clientSecret, "oauth-client-secret", "", "its secret, if it has one")
	fs.StringVar(&o.clientMetadataURL, "oauth-client-metadata-url", "", "https URL of the client's id metadata document, used as client id where the server supports it")
	fs.BoolVar(&o.clientCredentials, "oauth-client-credentials", false, "client credentials grant instead of the authorization code flow (--oauth-client-id with --oauth-client-secret or --oauth-private-key)")
	fs.StringVar(&o.privateKey, "oauth-private-key", "", "PEM private key `FILE` (EC, Ed25519 or RSA) authenticating --oauth-client-id with private_key_jwt in the grants without a user")
	fs.StringVar(&o.jwtBearer, "oauth-jwt-bearer", "", "JWT-bearer grant with the assertion in `FILE`, read at each token request (a workload identity token)")
	fs.StringVar(&o.idToken, "oauth-id-token", "", "enterprise-managed authorization: the user's ID token in `FILE`, exchanged at --oauth-idp-issuer for an ID-JAG presented in the JWT-bearer grant")
	fs.StringVar(&o.idpIssuer, "oauth-idp-issuer", "", "with --oauth-id-token: the identity provider's issuer URL")
	fs.StringVar(&o.idpClientID, "oauth-idp-client-id", "", "with --oauth-id-token: the client id at the identity provider")
	fs.StringVar(&o.idpClientSecret, "oauth-idp-client-secret", "", "with --oauth-id-token: its secret, if it has one")
	fs.BoolVar(&o.dpop, "oauth-dpop", false, "bind the tokens to a key of the client with DPoP proofs (RFC 9449); the key is kept in --state-dir")
}

// check validates the flags.
func (o *oauthFlags) check() error {
	if !o.on {
		if o.headless || o.redirect != defaultRedirect || o.clientID != "" || o.clientSecret != "" || o.clientMetadataURL != "" ||
			o.clientCredentials || o.dpop || o.privateKey != "" || o.jwtBearer != "" || o.idToken != "" || o.idpIssuer != "" || o.idpClientID != "" || o.idpClientSecret != "" {
			return fmt.Errorf("the --oauth-* flags need --oauth")
		}
		return nil
	}
	if err := o.checkGrant(); err != nil {
		return err
	}
	if u, err := url.Parse(o.redirect); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--oauth-redirect must be an http(s) URL, got %q", o.redirect)
	}
	if o.clientSecret != "" && o.clientID == "" {
		return fmt.Errorf("--oauth-client-secret needs --oauth-client-id")
	}
	if o.privateKey != "" && o.clientID == "" {
		return fmt.Errorf("--oauth-private-key needs --oauth-client-id")
	}
	if u, err := url.Parse(o.clientMetadataURL); o.clientMetadataURL != "" && (err != nil || u.Scheme != "https" || u.Path == "" || u.Path == "/") {
		return fmt.Errorf("--oauth-client-metadata-url must be an https URL with a path, got %q", o.clientMetadataURL)
	}
	return nil
}

// apply sets the client's OAuth options; the authorization URL goes to
// stderr for the user to open.
func (o *oauthFlags) apply(opts *client.Options, stderr io.Writer) {
	if !o.on {
		return
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = callHTTPClient()
		opts.HTTPClient = hc
	}
	authorize := client.LoopbackAuthorize(o.redirect, func(u string) {
		fmt.Fprintf(stderr, "mcp-conform call: open this URL to authorize, then come back:\n%s\n", u)
	})
	if o.headless {
		authorize = client.HeadlessAuthorize(hc)
	}
	opts.OAuth = &client.OAuthOptions{RedirectURL: o.redirect, Authorize: authorize, ClientID: o.clientID,
		ClientSecret: o.clientSecret, ClientMetadataURL: o.clientMetadataURL, ClientName: "mcp-conform call",
		ClientCredentials: o.clientCredentials, DPoP: o.dpop}
	if o.key != nil {
		opts.OAuth.PrivateKey = o.key
	}
	if o.jwtBearer != "" {
		opts.OAuth.Assertion = readToken(o.jwtBearer)
	}
	if o.idToken != "" {
		opts.OAuth.Enterprise = &client.EnterpriseOptions{IdPIssuer: o.idpIssuer, IdPClientID: o.idpClientID,
			IdPClientSecret: o.idpClientSecret, IDToken: readToken(o.idToken)}
	}
}

// checkGrant validates the flags of the grants without a user and reads
// the private key.
func (o *oauthFlags) checkGrant() error {
	n := 0
	for _, on := range []bool{o.clientCredentials, o.jwtBearer != "", o.idToken != ""} {
		if on {
			n++
		}
	}
	switch {
	case n > 1:
		return fmt.Errorf("--oauth-client-credentials, --oauth-jwt-bearer and --oauth-id-token are different grants: choose one")
	case o.clientCredentials && (o.clientSecret == "") == (o.privateKey == ""):
		return fmt.Errorf("--oauth-client-credentials needs --oauth-client-secret or --oauth-private-key (one of them)")
	case o.privateKey != "" && o.clientSecret != "":
		return fmt.Errorf("--oauth-private-key and --oauth-client-secret exclude each other")
	case o.privateKey != "" && n == 0:
		return fmt.Errorf("--oauth-private-key needs a grant without a user (--oauth-client-credentials, --oauth-jwt-bearer or --oauth-id-token)")
	case o.idToken != "" && (o.idpIssuer == "" || o.idpClientID == "" || o.clientID == ""):
		return fmt.Errorf("--oauth-id-token needs --oauth-idp-issuer, --oauth-idp-client-id and --oauth-client-id")
	case o.idToken == "" && (o.idpIssuer != "" || o.idpClientID != "" || o.idpClientSecret != ""):
		return fmt.Errorf("the --oauth-idp-* flags need --oauth-id-token")
	}
	if o.privateKey != "" {
		data, err := os.ReadFile(o.privateKey)
		if err != nil {
			return fmt.Errorf("--oauth-private-key: %w", err)
		}
		if o.key, err = client.ParsePrivateKey(data); err != nil {
			return fmt.Errorf("--oauth-private-key %s: %w", o.privateKey, err)
		}
	}
	return nil
}

// readToken returns a source of the token in file, read each time (a
// workload's token is rotated in place).
func readToken(file string) func(context.Context) (string, error) {
	return func(context.Context) (string, error) {
		data, err := os.ReadFile(file)
		if err != nil {
			return "", err
		}
		tok := strings.TrimSpace(string(data))
		if tok == "" {
			return "", fmt.Errorf("%s is empty", file)
		}
		return tok, nil
	}
}
