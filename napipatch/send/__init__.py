"""Before a series leaves: the git and b4 hooks, and sending a stored version with git send-
email."""
