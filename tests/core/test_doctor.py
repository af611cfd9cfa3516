import subprocess
import sys


def doctor(home, config):
    return subprocess.run([sys.executable, "-m", "bothost", "--home", str(home), "--config",
                           str(config), "doctor"], capture_output=True, text=True, timeout=120)


def test_doctor_passes_on_a_healthy_setup(home, tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("mcp: {servers: {weather: {enabled: false}}}\n")
    result = doctor(home, config)
    assert result.returncode == 0, result.stdout
    assert "ok  database" in result.stdout and "offline agent" in result.stdout


def test_doctor_names_what_is_wrong_and_the_fix(home, tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("llm: {provider: anthropic}\n"
                      "mcp: {servers: {weather: {enabled: false},"
                      " broken: {command: /bin/false}, missing: {command: no-such-mcp-server}}}\n")
    result = doctor(home, config)
    assert result.returncode == 1
    out = result.stdout
    assert "!!  llm: anthropic needs an API key" in out and "fix: set llm.api_key" in out
    assert "!!  mcp missing: command 'no-such-mcp-server' not found" in out
    assert out.count("mcp missing:") == 1  # reported once, and not started
    assert "!!  mcp broken:" in out and "bothost mcp logs broken" in out
