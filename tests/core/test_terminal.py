"""The terminal as a user meets it: ``bothost chat`` on a pseudo-terminal, approvals y/N."""

import os
import pty
import select
import subprocess
import sys
import textwrap
import time

PLUGIN = textwrap.dedent('''
    from bothost.hookspecs import hookimpl

    def wipe(target: str) -> str:
        """Erase a disk."""
        return f"wiped {target}"

    @hookimpl
    def register_tools(register):
        register(wipe, destructive=True)
''')


class Terminal:
    def __init__(self, argv, env):
        self.master, slave = pty.openpty()
        self.process = subprocess.Popen(
            argv, stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True
        )
        os.close(slave)
        self.seen = b""

    def expect(self, text, timeout=30):
        deadline = time.monotonic() + timeout
        while text.encode() not in self.seen:
            left = deadline - time.monotonic()
            assert left > 0, f"{text!r} never appeared; saw {self.seen.decode(errors='replace')!r}"
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    self.seen += os.read(self.master, 4096)
                except OSError:
                    break
        assert text.encode() in self.seen, self.seen.decode(errors="replace")

    def send(self, text):
        os.write(self.master, text.encode())

    def close(self):
        # at the prompt, not before: readline (Tab completion) reads raw, so a Ctrl-D typed
        # ahead, while the terminal was still in line mode, reaches it as a NUL, not an end
        deadline = time.monotonic() + 30
        while not self.seen.endswith(b"you> "):
            left = deadline - time.monotonic()
            assert left > 0, f"no prompt at the end; saw {self.seen.decode(errors='replace')!r}"
            if select.select([self.master], [], [], left)[0]:
                self.seen += os.read(self.master, 4096)
        self.send("\x04")  # end of input ends the conversation
        code = self.process.wait(timeout=30)
        os.close(self.master)
        return code


def start(tmp_path, home):
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "disks.py").write_text(PLUGIN)
    config = tmp_path / "c.yaml"
    config.write_text(
        f"plugins: {{dirs: ['{plugins}']}}\nmcp: {{servers: {{weather: {{enabled: false}}}}}}\n"
    )
    env = {**os.environ, "BOTHOST_HOME": str(home)}
    # started by hand, not with tests.helpers.run_bothost: on a pseudo-terminal, which is the
    # point of the test (the helper gives no stdin and pipes the output)
    return Terminal([sys.executable, "-m", "bothost", "--config", str(config), "chat"], env)


def test_interactive_chat_asks_before_a_destructive_tool(tmp_path, home):
    term = start(tmp_path, home)
    term.expect("you> ")
    term.send('call wipe {"target": "sdb"}\n')
    term.expect("[y/N]")
    term.send("y\n")
    term.expect("wiped sdb")
    term.expect("you> ")
    term.send('call wipe {"target": "sdc"}\n')
    term.expect("[y/N]")
    term.send("\n")  # the default is no
    term.expect("Not allowed: the user said no.")
    assert term.close() == 0


def test_allow_for_this_conversation_at_the_terminal(tmp_path, home):
    term = start(tmp_path, home)
    term.expect("you> ")
    term.send('call wipe {"target": "sdb"}\n')
    term.expect("[y/N] (c = allow for this conversation, a = always allow this exact call)")
    term.send("c\n")
    term.expect("wiped sdb")
    term.expect("you> ")
    term.seen = b""
    term.send('call wipe {"target": "sdc"}\n')
    term.expect("wiped sdc")  # not asked again in this conversation
    assert b"[y/N]" not in term.seen
    assert term.close() == 0
