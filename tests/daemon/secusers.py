"""Throwaway Unix users for the security tests (root only): unique names per
run (the PID), so that two builds' tests may run at once, removed in a finally
block by the caller (Users.remove)."""
import grp
import os
import pwd
import subprocess
import time


class Users:
    def __init__(self, tags):
        self.names = {}
        base = "rks%d" % os.getpid()
        try:
            for t in tags:
                name = "%s%s" % (base, t)
                self._stale(name)
                self._run(["useradd", "-M", "-U", "-d", "/nonexistent", "-s", "/bin/sh", name])
                self.names[t] = name
        except BaseException:
            self.remove()
            raise

    @staticmethod
    def _run(cmd):
        # useradd/userdel take a lock on /etc/passwd: another build's test may hold it a moment
        for attempt in range(50):
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode == 0:
                return
            if "lock" not in (r.stderr or "") or attempt == 49:
                raise RuntimeError("%s: %s" % (" ".join(cmd), r.stderr.strip()))
            time.sleep(0.1)

    def _stale(self, name):
        """A run killed before its finally block (a timeout) may have left this PID's names."""
        try:
            pwd.getpwnam(name)
            self._run(["userdel", name])
        except KeyError:
            pass
        try:
            grp.getgrnam(name)
            self._run(["groupdel", name])
        except KeyError:
            pass

    def pw(self, tag):
        return pwd.getpwnam(self.names[tag])

    def remove(self):
        for t, name in list(self.names.items()):
            try:
                self._run(["userdel", name])
            except RuntimeError as e:
                print("warning: %s" % e)
            del self.names[t]
