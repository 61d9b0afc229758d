package giteatest

import (
	"fmt"
	"path/filepath"
)

// appIni is a Gitea that starts fast and stays offline: SQLite, no SSH,
// no mail, no cron, no indexers, in-memory queues, cache and sessions,
// fixed secrets (the data is thrown away), everything under dir.
func appIni(dir string, port int, static, runUser string) string {
	p := func(elem ...string) string { return filepath.Join(append([]string{dir}, elem...)...) }
	return fmt.Sprintf(`APP_NAME = fleetwatch-test
RUN_MODE = prod
RUN_USER = %[9]s
I_AM_BEING_UNSAFE_RUNNING_AS_ROOT = true
WORK_PATH = %[1]s

[server]
PROTOCOL = http
HTTP_ADDR = 127.0.0.1
HTTP_PORT = %[2]d
DOMAIN = 127.0.0.1
ROOT_URL = http://127.0.0.1:%[2]d/
LOCAL_ROOT_URL = http://127.0.0.1:%[2]d/
OFFLINE_MODE = true
DISABLE_SSH = true
START_SSH_SERVER = false
LFS_START_SERVER = false
APP_DATA_PATH = %[3]s
STATIC_ROOT_PATH = %[4]s

[database]
DB_TYPE = sqlite3
PATH = %[5]s
SQLITE_JOURNAL_MODE = WAL

[security]
INSTALL_LOCK = true
SECRET_KEY = fleetwatch-test-secret-key-not-secret
INTERNAL_TOKEN = fleetwatch-test-internal-token-not-secret-0123456789abcdef
PASSWORD_HASH_ALGO = pbkdf2_v1
PASSWORD_COMPLEXITY = off
MIN_PASSWORD_LENGTH = 6

[oauth2]
ENABLED = false

[repository]
ROOT = %[6]s
DEFAULT_BRANCH = main

[repository.pull-request]
DEFAULT_MERGE_STYLE = fast-forward-only

[log]
MODE = file
LEVEL = Info
ROOT_PATH = %[7]s

[service]
DISABLE_REGISTRATION = true
REQUIRE_SIGNIN_VIEW = false
ENABLE_NOTIFY_MAIL = false
DEFAULT_KEEP_EMAIL_PRIVATE = true

[mailer]
ENABLED = false

[indexer]
ISSUE_INDEXER_TYPE = db
REPO_INDEXER_ENABLED = false

[queue]
TYPE = channel
DATADIR = %[8]s

[cache]
ADAPTER = memory

[session]
PROVIDER = memory

[picture]
DISABLE_GRAVATAR = true
ENABLE_FEDERATED_AVATAR = false

[cron]
ENABLED = false
RUN_AT_START = false

[cron.update_checker]
ENABLED = false

[actions]
ENABLED = false

[packages]
ENABLED = false

[migrations]
ALLOW_LOCALNETWORKS = false

[other]
SHOW_FOOTER_VERSION = false
`, dir, port, p("data"), static, p("data", "gitea.db"), p("repos"), p("log"), p("data", "queues"), runUser)
}
