"""Session-wide fixtures shared by every test folder."""
