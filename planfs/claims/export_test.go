package claims

// Unregister forgets name, for a test that registers a backend of its own.
func Unregister(name string) {
	registryMu.Lock()
	defer registryMu.Unlock()
	delete(registry, name)
}
