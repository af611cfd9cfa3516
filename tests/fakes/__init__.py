"""Fakes of outside services, served on 127.0.0.1 in the real wire format."""
