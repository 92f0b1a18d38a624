# Each husk run is a Dask task, on whatever workers the cluster has (here a
# LocalCluster of two worker processes; with a real cluster only the Client
# line changes).  Every worker needs husk installed and the datasets on its
# own disk.  (No dashboard here: it would listen on every interface.)
import husk
from dask.distributed import Client, LocalCluster


def square_in_a_vm(i: int) -> husk.Result:
    return husk.run("python", ["-c", f"print({i} * {i})"], timeout=10, memory="128M")


if __name__ == "__main__":
    with LocalCluster(n_workers=2, threads_per_worker=2, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        results = client.gather(client.map(square_in_a_vm, range(20)))
        print([int(r.stdout) for r in results])
        # husk.run itself is a task too; keyword arguments go to every run.
        hostile = ["while True: pass", "import os\nwhile True: os.fork()", "print(1/0)"]
        for r in client.gather(client.map(husk.run, ["python"] * 3, [["-c", s] for s in hostile], timeout=2)):
            print(r.reason, r.exit_status)
