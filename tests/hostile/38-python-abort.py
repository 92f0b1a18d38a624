# expected: os.abort() kills the program with SIGABRT: exit 134 (TODO: today husk exits 122 "guest halted without exiting")
import os, sys
sys.stdout.write("before abort\n")
sys.stdout.flush()
os.abort()
