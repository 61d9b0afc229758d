package converse

// startACP is built by its own change.
func startACP(pipes Pipes, cfg Config) (Conversation, error) {
	return nil, ErrClosed
}
