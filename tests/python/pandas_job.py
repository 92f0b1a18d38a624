"""A pandas job for Debian images: a CSV dataset grouped and resampled, a
figure saved, a fit; the same output natively and in husk (tests and
bench/debian).  Usage: pandas_job.py CSV OUT_DIR"""
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from scipy import optimize

src, out = sys.argv[1], sys.argv[2]
df = pd.read_csv(src, parse_dates=["time"])
by_group = df.groupby("group")["value"].agg(["count", "sum", "mean", "std"]).round(6)
print(by_group.to_string())
daily = df.set_index("time")["value"].resample("D").agg(["mean", "max"]).round(6)
print(daily.head(10).to_string())
a = np.linalg.cholesky(np.cov(df[["value", "other"]].to_numpy().T))
print("cholesky", np.round(a, 6).tolist())
x = df["other"].to_numpy()[:2000]
y = df["value"].to_numpy()[:2000]
fit = optimize.curve_fit(lambda t, p, q: p * t + q, x, y)[0]
print("fit", np.round(fit, 6).tolist())
fig, ax = plt.subplots(figsize=(6, 3), dpi=100)
daily["mean"].plot(ax=ax)
fig.savefig(f"{out}/daily.png")
print("figure saved")
