package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strings"
)

// Sign returns a cookie value that proves the server issued session id.
func Sign(id string, key []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id))
	return id + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// Verify returns the session id of a value made by Sign.
func Verify(value string, key []byte) (string, bool) {
	i := strings.LastIndexByte(value, '.')
	if i < 0 {
		return "", false
	}
	id := value[:i]
	return id, hmac.Equal([]byte(Sign(id, key)), []byte(value))
}
