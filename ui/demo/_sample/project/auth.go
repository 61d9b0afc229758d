package main

import (
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"strings"
)

const hashRounds = 600_000

// HashPassword returns a salted hash of pw to store instead of it.
func HashPassword(pw string) (string, error) {
	salt := make([]byte, 16)
	rand.Read(salt)
	key, err := pbkdf2.Key(sha256.New, pw, salt, hashRounds, 32)
	if err != nil {
		return "", err
	}
	enc := base64.RawStdEncoding
	return enc.EncodeToString(salt) + "$" + enc.EncodeToString(key), nil
}

// CheckPassword reports whether pw is the password hash was made from.
func CheckPassword(pw, hash string) bool {
	enc := base64.RawStdEncoding
	salt64, key64, ok := strings.Cut(hash, "$")
	salt, err1 := enc.DecodeString(salt64)
	want, err2 := enc.DecodeString(key64)
	if !ok || err1 != nil || err2 != nil {
		return false
	}
	got, err := pbkdf2.Key(sha256.New, pw, salt, hashRounds, len(want))
	return err == nil && subtle.ConstantTimeCompare(got, want) == 1
}
