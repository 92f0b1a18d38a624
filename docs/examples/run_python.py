import husk

r = husk.run("python", ["-c", "print(1+1)"], timeout=5, memory="256M",
             ro={"data": "ds/"}, workdir="out/", env={"K": "V"})
print(r.exit_status, r.stdout, r.stderr, r.stats["wall_s"] > 0, r.audit[0]["event"])
