"""The product's promise end to end, in the real ``bothost run`` process.

The bundled weather server (against a fake Open-Meteo) sees rain coming and pushes
``event/weather_alert``; the host queues it; the host's own tick triages it and delivers a
briefing to ``web:briefings``, where the web chat shows it.
"""

import asyncio
import json
import signal
import sqlite3

import aiohttp
import yaml

from tests.fakes.open_meteo import ZURICH, FakeOpenMeteo
from tests.helpers import bothost_process, free_port

# A delivery's final states (bothost/events/ledger.py); `pending` is the host's, mid-send.
SETTLED = {"delivered", "failed", "cancelled"}


def briefings(home):
    if not (home / "bothost.db").exists():
        return []
    db = sqlite3.connect(home / "bothost.db")
    try:
        return db.execute(
            "SELECT b.text, d.status FROM briefings b JOIN deliveries d ON d.briefing_id = b.id"
            " WHERE d.target = 'web:briefings'"
        ).fetchall()
    except sqlite3.OperationalError:  # tables not created yet
        return []
    finally:
        db.close()


async def test_rain_alert_becomes_a_briefing_in_the_web_chat(tmp_path, home):
    meteo = await FakeOpenMeteo().start()
    meteo.at(ZURICH).hourly_precipitation_probability = [20, 85]
    port = free_port()
    config = tmp_path / "bothost.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "platforms": {"web": {"port": port}},
                "mcp": {
                    "servers": {
                        "weather": {
                            "env": {
                                "WEATHER_API_BASE": meteo.base,
                                "WEATHER_WATCH": "Zurich",
                                "WEATHER_ALERT_TEMPERATURE_DROP": "off",
                                "WEATHER_ALERT_WIND_GUSTS": "off",
                                "WEATHER_ALERT_AQI": "off",
                            }
                        }
                    }
                },
                "tick": {"interval": "1s", "deliver_to": ["web:briefings"]},
            }
        )
    )
    process = await bothost_process(home, config, "run")
    try:
        # the host writes the delivery row `pending` before it sends: wait for the outcome
        async with asyncio.timeout(60):
            while not any(status in SETTLED for _, status in briefings(home)):
                await asyncio.sleep(0.2)
        ((text, status),) = briefings(home)
        assert status == "delivered"
        assert "Zürich" in text and "85" in text and "event" in text
        async with aiohttp.ClientSession() as client:
            async with client.get(f"http://127.0.0.1:{port}/api/dashboard") as response:
                assert response.status == 200
                shown = (await response.json())["briefings"]
        assert any("Zürich" in json.dumps(b, ensure_ascii=False) for b in shown)
    finally:
        process.send_signal(signal.SIGTERM)
        await asyncio.wait_for(process.communicate(), 30)
        await meteo.stop()
    assert process.returncode == 0
