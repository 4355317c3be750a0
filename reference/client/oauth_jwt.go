package client

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"time"
)

// ParsePrivateKey reads a PEM private key (PKCS #8, SEC 1 EC or PKCS #1
// RSA) that signs JWTs: ECDSA P-256, P-384 or P-521, Ed25519, or RSA.
func ParsePrivateKey(data []byte) (crypto.Signer, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("no PEM block in the private key")
	}
	var key any
	var err error
	switch block.Type {
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	default:
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	}
	if err != nil {
		return nil, fmt.Errorf("private key (%s): %w", block.Type, err)
	}
	s, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("private key: %T cannot sign", key)
	}
	if _, err := newSigningKey(s); err != nil {
		return nil, err
	}
	return s, nil
}

// signingKey signs compact JWS (RFC 7515) with the algorithm its key
// implies (RFC 7518).
type signingKey struct {
	priv crypto.Signer
	alg  string
}

func newSigningKey(s crypto.Signer) (*signingKey, error) {
	k := &signingKey{priv: s}
	switch p := s.Public().(type) {
	case *ecdsa.PublicKey:
		switch p.Curve {
		case elliptic.P256():
			k.alg = "ES256"
		case elliptic.P384():
			k.alg = "ES384"
		case elliptic.P521():
			k.alg = "ES512"
		default:
			return nil, fmt.Errorf("private key: ECDSA curve %s is not one JWS signs with", p.Curve.Params().Name)
		}
	case ed25519.PublicKey:
		k.alg = "EdDSA"
	case *rsa.PublicKey:
		k.alg = "RS256"
	default:
		return nil, fmt.Errorf("private key: %T is not an ECDSA, Ed25519 or RSA key", p)
	}
	return k, nil
}

var b64 = base64.RawURLEncoding

// sign returns the compact JWS of claims under header (alg is added).
func (k *signingKey) sign(header, claims map[string]any) (string, error) {
	header["alg"] = k.alg
	h, err := json.Marshal(header)
	if err != nil {
		return "", err
	}
	c, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	input := b64.EncodeToString(h) + "." + b64.EncodeToString(c)
	var sig []byte
	switch p := k.priv.(type) {
	case *ecdsa.PrivateKey:
		size := (p.Curve.Params().BitSize + 7) / 8
		var digest []byte
		switch k.alg {
		case "ES256":
			d := sha256.Sum256([]byte(input))
			digest = d[:]
		case "ES384":
			d := sha512.Sum384([]byte(input))
			digest = d[:]
		default:
			d := sha512.Sum512([]byte(input))
			digest = d[:]
		}
		r, s, err := ecdsa.Sign(rand.Reader, p, digest)
		if err != nil {
			return "", err
		}
		// JWS takes R and S fixed-size, not ASN.1 (RFC 7518 3.4).
		sig = make([]byte, 2*size)
		r.FillBytes(sig[:size])
		s.FillBytes(sig[size:])
	case ed25519.PrivateKey:
		sig = ed25519.Sign(p, []byte(input))
	default:
		d := sha256.Sum256([]byte(input))
		if sig, err = k.priv.Sign(rand.Reader, d[:], crypto.SHA256); err != nil {
			return "", err
		}
	}
	return input + "." + b64.EncodeToString(sig), nil
}

// jwk returns the public key as a JWK (RFC 7517) of its required members
// only, as its thumbprint (RFC 7638) takes them.
func (k *signingKey) jwk() map[string]string {
	switch p := k.priv.Public().(type) {
	case *ecdsa.PublicKey:
		size := (p.Curve.Params().BitSize + 7) / 8
		pt, _ := p.ECDH() // the curves newSigningKey takes all have one
		raw := pt.Bytes() // 0x04 || X || Y
		return map[string]string{"kty": "EC", "crv": p.Curve.Params().Name, "x": b64.EncodeToString(raw[1 : 1+size]), "y": b64.EncodeToString(raw[1+size:])}
	case ed25519.PublicKey:
		return map[string]string{"kty": "OKP", "crv": "Ed25519", "x": b64.EncodeToString(p)}
	case *rsa.PublicKey:
		return map[string]string{"kty": "RSA", "n": b64.EncodeToString(p.N.Bytes()), "e": b64.EncodeToString(big.NewInt(int64(p.E)).Bytes())}
	}
	return nil
}

// thumbprint is the JWK SHA-256 thumbprint (RFC 7638): json.Marshal
// writes a map's members sorted and without whitespace, as it requires.
func (k *signingKey) thumbprint() string {
	data, _ := json.Marshal(k.jwk())
	sum := sha256.Sum256(data)
	return b64.EncodeToString(sum[:])
}

// randomID returns a random token for jti claims.
func randomID() string {
	var b [16]byte
	rand.Read(b[:])
	return b64.EncodeToString(b[:])
}

// clientAssertion is a private_key_jwt client authentication (RFC 7523
// 2.2, 3): issued by the client about itself for the authorization
// server, whose issuer identifier is the audience.
func (k *signingKey) clientAssertion(clientID, audience string, now time.Time) (string, error) {
	return k.sign(map[string]any{"typ": "JWT"}, map[string]any{
		"iss": clientID, "sub": clientID, "aud": audience, "jti": randomID(),
		"iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(),
	})
}
