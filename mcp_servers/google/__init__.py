"""What the gmail and gcal servers share: OAuth tokens, the API client, the watchers' state.

The Google client libraries are blocking; `client.GoogleClient` runs every request in a
worker thread under a deadline so the servers' event loops never wait on the network.
"""
