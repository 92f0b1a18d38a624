-- expected: with --output-limit 1M stdout gets exactly 1 MiB, a one-line marker goes to stderr, the run ends with 153
local block = string.rep("flood ", 10922) .. "\n"
for _ = 1, 256 do io.write(block) end  -- ~16 MiB
os.exit(0)
