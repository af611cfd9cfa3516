import pytest

from tests.fakes.llm import FakeLlm


@pytest.fixture
async def fake_llm():
    fake = await FakeLlm().start()
    yield fake
    await fake.stop()
