"""Planning and scheduling: which flows run, in which order, on which target."""
