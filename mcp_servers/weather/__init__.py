"""The bundled weather MCP server: Open-Meteo forecasts, air quality and alerts, no key.

Tools `geocode`, `current`, `forecast`, `air_quality` and `status`, each taking a
`location` (place name or "lat,lon"); a watcher that pushes `event/weather_alert` once per
threshold crossing. `WEATHER_API_BASE` points all three Open-Meteo APIs at one base URL.
See docs/servers/weather.md.
"""
