"""How the weather server names a place: one label for a resolved place and for a geocoder
result named in an error (with or without coordinates), whatever the geocoder put in it."""

from __future__ import annotations

from typing import Any

import pytest
from bothost.mcp_servers.kit import ToolError
from bothost.mcp_servers.weather.places import PlaceResolver, place_from_result

POINT = {"latitude": 39.8, "longitude": -89.6}


class Geocoder:
    """The one call PlaceResolver makes of OpenMeteo, answering ``results``."""

    def __init__(self, results: list[dict[str, Any]]) -> None:
        self.results = results

    async def geocode(self, name: str, count: int) -> list[dict[str, Any]]:
        return self.results[:count]


async def refusal(results: list[dict[str, Any]], location: str) -> str:
    with pytest.raises(ToolError) as caught:
        await PlaceResolver(Geocoder(results)).resolve(location)  # type: ignore[arg-type]
    return str(caught.value)


@pytest.mark.parametrize(
    ("result", "label"),
    [
        (
            {"name": "Zürich", "admin1": "Zurich", "country": "Switzerland"},
            "Zürich, Zurich, Switzerland",
        ),
        (
            {"name": "Monaco", "admin1": "Monaco", "country": "Monaco", "country_code": "MC"},
            "Monaco",
        ),
        ({"name": "Vaduz", "country_code": "LI"}, "Vaduz, LI"),  # no country: its code
        ({"name": "", "admin1": "Bern"}, "?, Bern"),  # a result without a name
        ({"name": 1234, "admin1": 5}, "1234, 5"),  # numbers where names belong
        (
            {"name": "Spring\nfield  Town", "country": "United\tStates"},
            "Spring field Town, United States",
        ),
    ],
)
async def test_a_result_is_named_alike_with_and_without_coordinates(result, label):
    place = place_from_result(result | POINT)
    assert place is not None and place.label == label
    error = await refusal([result], "Anything, Nowhere-land")
    assert error == f"No place 'Anything' in 'Nowhere-land'. Found: {label}"


async def test_a_huge_name_is_cut_in_the_error_and_the_label():
    result = {"name": "x" * 5000, "country": "Y"}
    error = await refusal([result], "x, Elsewhere")
    assert len(error) < 300 and error.endswith("…, Y") and "\n" not in error
    place = place_from_result(result | POINT)
    assert place is not None and place.label == error.partition("Found: ")[2]


async def test_the_error_names_at_most_five_results():
    results = [{"name": f"Springfield {n}", "admin1": f"State {n}"} for n in range(8)]
    error = await refusal(results, "Springfield, Texas")
    assert error.count("Springfield ") == 5 and "; " in error
