# expected: only the default environment is visible: prints ['HOME', 'LANG', 'PATH', 'PYTHONHOME'] and "secret: None", exit 0
import os
print(sorted(os.environ))
print("secret:", os.environ.get("AWS_SECRET_ACCESS_KEY"))
