"""Settings: the one declaration of every setting, and the cascade that resolves them into `Options`."""
