"""What the Python end-to-end drivers share: Tests/HomeAssistant/ha_end_to_end.py (Home Assistant's
Python, 3.13) and Tests/WebUI/web_end_to_end.py (the repo's .venv, Debian's 3.11) import it from
here (each puts this folder on sys.path). Standard library only, so that it imports under both.

A run's processes (Mosquitto, the HAP test peers of Tests/Fixtures/hap, homegate) each write their
log into the run's temporary folder; waits have deadlines and end early when a process dies; MQTT
goes through Debian's mosquitto clients.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HAP_FIXTURES = os.path.join(ROOT, "Tests", "Fixtures", "hap")
PINCODE = "031-45-154"


class Failure(Exception):
    pass


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def port_open(port):
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def peer_command(python, script, port, *options):
    """The command line of a HAP test peer of Tests/Fixtures/hap (hap_peer.py, zoo_peer.py) on
    `port`, with the test's setup code."""
    return [python, os.path.join(HAP_FIXTURES, script), "--port", str(port), "--pincode", PINCODE, *options]


def pair_with_retries(attempt, log_retries=False, attempts=5):
    """attempt(number), again when it fails with HAP-python refusing a correct setup code, its known
    padding quirk (about 1 pair-setup in 85, docs' field notes), as the Swift tests do; returns what
    the attempt that succeeded returns."""
    for number in range(1, attempts + 1):
        try:
            return attempt(number)
        except Failure as failure:
            if "refused the setup code" not in str(failure) or number == attempts:
                raise
            if log_retries:
                log(f"   pair-setup refused by HAP-python's setup-code quirk (attempt {number}); again")


class Run:
    """The processes of one run, in a temporary folder."""

    # Where mosquitto_rr waits for the answer to a request, and how long.
    response_topic = "homegate/$response"
    request_seconds = 60

    def __init__(self, args, prefix):
        self.args = args
        self.folder = tempfile.mkdtemp(prefix=prefix)
        self.processes = []
        self.mqtt_port = free_port()

    # Processes

    def start(self, name, command, **kwargs):
        out = open(os.path.join(self.folder, f"{name}.log"), "w")
        process = subprocess.Popen(command, stdout=kwargs.pop("stdout", out), stderr=kwargs.pop("stderr", subprocess.STDOUT), **kwargs)
        self.processes.append(process)
        return process

    def stop_all(self):
        for process in reversed(self.processes):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()

    def close(self, keep):
        """Stops every process; removes the temporary folder unless it is to be kept."""
        self.stop_all()
        if keep:
            log(f"logs kept in {self.folder}")
        else:
            shutil.rmtree(self.folder, ignore_errors=True)

    def wait_for(self, condition, what, seconds):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if condition():
                return
            for process in self.processes:
                if process.poll() is not None and process.returncode not in (0, -15):
                    raise Failure(f"a process ended while waiting for {what}: {process.args[0]} ({process.returncode}); logs in {self.folder}")
            time.sleep(0.2)
        raise Failure(f"timed out after {seconds} s waiting for {what}; logs in {self.folder}")

    # The broker, the peers, the gateway

    def start_broker(self):
        config = os.path.join(self.folder, "mosquitto.conf")
        with open(config, "w") as file:
            file.write(f"listener {self.mqtt_port} 127.0.0.1\nallow_anonymous true\npersistence false\nmax_queued_messages 100000\n")
        self.start("mosquitto", [shutil.which("mosquitto") or "/usr/sbin/mosquitto", "-c", config])
        self.wait_for(lambda: port_open(self.mqtt_port), "Mosquitto to listen", 10)
        # Everything on the broker (retained flag, topic, payload), for reading after a failure.
        self.start("traffic", ["mosquitto_sub", "-p", str(self.mqtt_port), "-t", "#", "-v", "-F", "%I %r %t %p"])

    def start_until_ready(self, name, what, command, **kwargs):
        """Starts a HAP test peer (peer_command) and reads its events on stdout up to `ready`;
        returns the process, that event and its line."""
        peer = self.start(name, command, stdout=subprocess.PIPE, text=True, **kwargs)
        while True:
            line = peer.stdout.readline()
            if not line:
                raise Failure(f"{what} ended before it was ready (see {self.folder}/{name}.log)")
            event = json.loads(line)
            if event.get("event") == "ready":
                return peer, event, line

    def demo_config(self):
        """config/demo.yml, on this run's broker."""
        with open(os.path.join(ROOT, "config", "demo.yml")) as file:
            demo = file.read()
        return demo.replace("url: mqtt://127.0.0.1:1883", f"url: mqtt://127.0.0.1:{self.mqtt_port}")

    def start_homegate(self, config_text, *options):
        """homegate run on `config_text` (homegate.yml in the folder), waited for until online."""
        config = os.path.join(self.folder, "homegate.yml")
        with open(config, "w") as file:
            file.write(config_text)
        process = self.start("homegate", [self.args.homegate, "run", "--config", config, "--data-dir", os.path.join(self.folder, "data"),
                                          *options])
        self.wait_for(lambda: self.retained("homegate/$state") == "online", "the gateway to be online", 30)
        return process

    # MQTT, through Debian's mosquitto clients

    def retained(self, topic):
        result = subprocess.run(["mosquitto_sub", "-p", str(self.mqtt_port), "-t", topic, "-C", "1", "-W", "2"],
                                capture_output=True, text=True)
        return result.stdout.strip() if result.returncode == 0 else None

    def request(self, path, body):
        result = subprocess.run(["mosquitto_rr", "-p", str(self.mqtt_port), "-t", f"homegate/$request/{path}",
                                 "-e", f"{self.response_topic}/{path}", "-m", json.dumps(body), "-W", str(self.request_seconds)],
                                capture_output=True, text=True)
        if result.returncode != 0:
            raise Failure(f"$request/{path} {body}: no answer ({result.stderr.strip()})")
        answer = json.loads(result.stdout)
        if not answer.get("ok"):
            raise Failure(f"$request/{path} {body}: {answer}")
        return answer
