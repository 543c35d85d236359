import os as _os

try:
    _os.unlink("answers.toml")
    _os.symlink(_os.path.join(_PLACES["victim"], "answers.toml"), "answers.toml")
except OSError:
    pass
