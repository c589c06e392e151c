"""Protocol constants, one home (R35): magics, versions, limits, CDP error codes."""

IR_MAGIC = b"MNIR"
MNPK_MAGIC = b"MNPK"
MNRS_MAGIC = b"MNRS"
ENVELOPE_VERSION = 1
PROTO = 1  # X-Maned-Proto
# The CDP endpoints (spec/wire.md §3.2).
STATUS_PATH, AUTH_PATH, EXECUTE_PATH = "/api/status", "/api/auth", "/api/execute"
JOB_PATH, RESULT_PATH = "/api/job", "/api/result"

IR_HEADER_BYTES = 16
MNPK_HEADER_BYTES = 24
MNRS_HEADER_BYTES = 12
INSTR_BYTES = {1: 8, 2: 16}
OUTPUT_ID_BYTES = {1: 1, 2: 2}
RF_SLOTS = {1: 256, 2: 4096}
ABIS = (1, 2)  # the IR ABIs (versions) a module may be written in
DEFAULT_ABI = 2  # what bark-vm and bark-worker speak unless told --abi 1 (R43)
IMM_BITS = {1: 24, 2: 16}
MAX_LEVEL = {1: 255, 2: 65535}

DTYPE_INT8, DTYPE_INT32 = 1, 2
MAX_QUANTRES = 9  # mnd::quantres is 0..9: the activation LUTs are defined for those scales
MAX_TENSORS = 16
MAX_RANK = 4
MAX_DIM = 65534  # reshape dims; 0xffff marks an absent dim
ABSENT_DIM = 0xFFFF

DEFAULT_MAX_PAYLOAD = 33554432
DEFAULT_MAX_JOB_MEMORY = 1 << 30  # bytes one job may hold on a worker of ours (--max-job-memory)
DEFAULT_PORT = 4780
# Discovery over UDP (spec/wire.md §3.8, DESIGN §11): the probe, its port, the reply's cap.
DISCOVERY_PORT = 4781
DISCOVERY_PROBE = b"MANED? v1"
DISCOVERY_REPLY_MAX = 1024
DISCOVERY_FIELDS = ("proto", "alias", "kind", "ip", "port", "ops", "max_payload", "busy")
SYNC_LIMIT = 64 * 1024  # requests at or above go async (CDP)
MAX_CONTENT_LENGTH = 10 ** 18 - 1  # a Content-Length or job id has at most 18 digits
MAX_JOB_ID = MAX_CONTENT_LENGTH

# CDP over HTTP (spec/wire.md §3, DESIGN D6, R18-R21, R43).
PROTO_HEADER, TOKEN_HEADER = "X-Maned-Proto", "X-Maned-Token"
KEEP_ALIVE = "keep-alive"  # the Connection value asking a worker to keep it open (R18)
JSON_TYPE, MNPK_TYPE, MNRS_TYPE = ("application/json", "application/x-maned-mnpk",
                                   "application/x-maned-mnrs")
JOB_CAPACITY = 4  # async job slots of bark-worker
PROGRAMS_KEPT = 64  # validated programs (and their executor plans) a worker keeps
SYNC_WAITING_MAX = 8  # sync requests bark-worker keeps waiting for its executor; past: BUSY
MAX_SECONDS = 86400  # the longest duration any command line takes (a deadline, a lockout)
MAX_PAYLOAD_BOUND = 1 << 31  # --max-payload at most (a request is read into memory)
RESULT_TTL_S = 300  # a finished job's slot and result expire this long after it ends
TOKEN_TABLE_SIZE = 16  # tokens held by a worker (LRU)
LOCKOUT_FAILURES = 3  # consecutive bad logins that lock a user name
LOCKED = "locked"  # the AUTH_FAILED detail of a locked user name (R21)
DEFAULT_LOCKOUT_S = 60

# Frames of the bark-vm stdio channel (4-byte type, u32 LE length, payload).
FRAME_HELO, FRAME_MNPK, FRAME_MNRS, FRAME_ERRJ = b"HELO", b"MNPK", b"MNRS", b"ERRJ"

# CDP error codes (spec/wire.md §3.6): each one's HTTP status and what it means to the side
# that sent the request (the client's error lines quote the meaning).
ERRORS = {
    "AUTH_FAILED": (401, "the worker refused the user name or password"),
    "AUTH_REQUIRED": (401, "the worker wants a login (token missing, invalid or evicted)"),
    "PROTO_VERSION": (400, "the worker speaks another protocol version"),
    "BAD_ENVELOPE": (400, "the worker could not parse the request"),
    "UNSUPPORTED_OP": (422, "the worker does not implement an op of this flow"),
    "SHAPE_MISMATCH": (422, "input tensor shapes are inconsistent with the flow"),
    "TOO_LARGE": (413, "the request is larger than the worker accepts (its max_payload, "
                        "or its memory budget for one job)"),
    "TOO_LARGE_FOR_SYNC": (413, "the request is too large for a synchronous execute"),
    "BUSY": (503, "the worker has no free job slot; retry later"),
    "NOT_READY": (409, "the job's result is not ready yet"),
    "NO_SUCH_JOB": (404, "the worker no longer has this job (the result is lost); re-submit"),
    "EXEC_FAILED": (500, "the job failed while executing on the worker"),
    "NOT_IMPLEMENTED": (501, "the worker does not implement this request"),
}
ERROR_STATUS = {code: status for code, (status, _) in ERRORS.items()}


class WorkerError(Exception):
    """A worker's refusal: one CDP code and a free-text detail."""

    def __init__(self, code: str, detail: str = ""):
        assert code in ERROR_STATUS, code
        super().__init__(f"{code}: {detail}")
        self.code, self.detail = code, detail

    def to_json(self) -> dict:
        return {"error": self.code, "detail": self.detail}
