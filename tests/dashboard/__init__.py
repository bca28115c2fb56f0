"""Tests of skitter.dashboard: the JSON API, /metrics, security, the page in Chromium."""
