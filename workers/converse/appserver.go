package converse

// startAppServer is built by its own change.
func startAppServer(pipes Pipes, cfg Config) (Conversation, error) {
	return nil, ErrClosed
}
