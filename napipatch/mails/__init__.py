"""mails."""
