"""A single-node Slurm cluster of its own, for tests: a munged on a private socket and key, a generated slurm.conf
(this host as controller and node, its CPUs and memory from `slurmd -C`, free ports, no accounting, no cgroups,
scheduling without delays), slurmctld and slurmd in the foreground. It stops exactly the daemons it started,
by pid. It needs root (munged runs as the munge user, slurmd as root), as CI runs the tests; if a daemon does not
come up, start() raises with every log it has."""
import os
import shutil
import signal
import socket
import subprocess
import time


def free_ports(n):
    """n distinct ports free now (all held at once while they are picked, so no two are the same)."""
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


class Cluster:
    def __init__(self, root):
        self.root = os.path.abspath(root)
        self.conf = os.path.join(self.root, "slurm.conf")
        self.procs = []
        self.outs = []
        self.env = {**os.environ, "SLURM_CONF": self.conf}

    def log(self, name):
        return os.path.join(self.root, name + ".log")

    def logs(self):
        text = ""
        for name in sorted(os.listdir(self.root)):
            if name.endswith(".log") or name.endswith(".out"):
                with open(os.path.join(self.root, name), errors="replace") as f:
                    text += f"---- {name}\n{f.read()[-4000:]}\n"
        return text

    def spawn(self, name, argv):
        out = open(os.path.join(self.root, name + ".out"), "w")
        self.outs.append(out)
        self.procs.append(subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=self.env))

    def start(self, timeout=30):
        shutil.rmtree(self.root, ignore_errors=True)
        os.makedirs(os.path.join(self.root, "state"))
        os.makedirs(os.path.join(self.root, "spool"))
        os.chmod(self.root, 0o755)
        munge = os.path.join(self.root, "munge")  # munged checks it: the munge user's, others may only traverse it
        os.makedirs(munge)
        shutil.chown(munge, "munge", "munge")
        os.chmod(munge, 0o711)
        key = os.path.join(munge, "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        shutil.chown(key, "munge", "munge")
        os.chmod(key, 0o600)
        sock = os.path.join(munge, "munge.sock")
        self.spawn("munged", ["setpriv", "--reuid=munge", "--regid=munge", "--init-groups", "/usr/sbin/munged", "-F", f"--socket={sock}",
                              f"--key-file={key}", f"--pid-file={munge}/munged.pid", f"--log-file={munge}/munged.log",
                              f"--seed-file={munge}/munged.seed"])
        self.wait_for(lambda: os.path.exists(sock), timeout, "munged")
        node = subprocess.run(["slurmd", "-C"], capture_output=True, text=True, check=True).stdout.splitlines()[0]
        host = node.split()[0].split("=", 1)[1]
        # A port found free can be taken before the daemon binds it (another process's connection): then the
        # daemons start again on new ports, a few times, before the failure is reported.
        for attempt in range(3):
            self.write_conf(host, node, sock)
            if self.daemons_up(timeout, last=attempt == 2):
                return

    def write_conf(self, host, node, sock):
        ctld_port, slurmd_port = free_ports(2)
        with open(self.conf, "w") as f:
            f.write(f"""ClusterName=npukit
SlurmctldHost={host}
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
AuthType=auth/munge
AuthInfo=socket={sock}
CredType=cred/munge
SlurmUser=root
StateSaveLocation={self.root}/state
SlurmdSpoolDir={self.root}/spool
SlurmctldPidFile={self.root}/slurmctld.pid
SlurmdPidFile={self.root}/slurmd.pid
SlurmctldLogFile={self.log("slurmctld")}
SlurmdLogFile={self.log("slurmd")}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerParameters=sched_min_interval=0,batch_sched_delay=0,sched_interval=1
ReturnToService=2
{node} State=UNKNOWN
PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP
""")

    def daemons_up(self, timeout, last):
        """Starts slurmctld and slurmd; False (daemons stopped) when one could not bind its port and `last` is not set."""
        for name in ("slurmctld", "slurmd"):
            if os.path.exists(self.log(name)):
                os.remove(self.log(name))
        self.spawn("slurmctld", ["slurmctld", "-D", "-f", self.conf])
        self.spawn("slurmd", ["slurmd", "-D", "-f", self.conf])

        def idle():
            p = subprocess.run(["sinfo", "-h", "-o", "%t"], capture_output=True, text=True, env=self.env)
            return p.returncode == 0 and p.stdout.strip() == "idle"
        if self.poll(idle, timeout):
            return True
        if not last and "Address already in use" in self.logs():
            self.stop(keep=1)  # munged stays
            return False
        self.fail("slurmctld and slurmd (node idle)", timeout)

    def wait_for(self, ready, timeout, what):
        if not self.poll(ready, timeout):
            self.fail(what, timeout)

    def poll(self, ready, timeout):
        """Whether `ready` holds within `timeout` s while every daemon runs."""
        end = time.time() + timeout
        while time.time() < end:
            if ready():
                return True
            if any(p.poll() is not None for p in self.procs):
                return False
            time.sleep(0.1)
        return False

    def fail(self, what, timeout):
        logs = self.logs()
        self.stop()
        raise RuntimeError(f"{what} did not come up in {timeout} s\n{logs}")

    def stop(self, keep=0):
        """Stops the daemons started after the first `keep` of them."""
        doomed, outs = self.procs[keep:], self.outs[keep:]
        for p in reversed(doomed):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in reversed(doomed):
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.procs, self.outs = self.procs[:keep], self.outs[:keep]
        for out in outs:
            out.close()
