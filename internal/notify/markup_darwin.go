package notify

// bodyMarkup reports whether the desktop's notifications render markup in
// bodies: Notification Center shows plain text.
func bodyMarkup() bool { return false }
