# expected: unbounded recursion raises RecursionError, which the program catches; exit 0
def down(n):
    return down(n + 1) + 1
try:
    down(0)
except RecursionError as e:
    print("RecursionError:", e)
