"""A worker's address as people write it, `HOST`, `HOST:PORT`, `[V6]` or `[V6]:PORT`: the
one reader of it, for a device block's host, `--device`, `--probe` and a worker URL. What
it refuses it never quotes but the port (a 'port' may be a password typed in its place):
each caller words the refusal in its own terms."""
from bark_vm.wire.digits import whole_number


class BadAddress(ValueError):
    """Why a text is no address: `part` is "host" (missing) or "brackets" (an IPv6
    address's), with `why`; or "port", with the port's own text in `port`."""

    def __init__(self, part: str, why: str, port: str = ""):
        super().__init__(why)
        self.part, self.why, self.port = part, why, port


def parse_address(text: str) -> tuple[str, int | None]:
    """(host, port) of `text`, the port None when it gives none (an IPv6 host without its
    brackets); BadAddress when the host is missing, the brackets are wrong or the port is
    not a whole number from 1 to 65535."""
    if text.startswith("["):
        close = text.find("]")
        if close < 0:
            raise BadAddress("brackets", "an IPv6 address's [ is not closed")
        host, rest = text[1:close], text[close + 1:]
        if rest and not rest.startswith(":"):
            raise BadAddress("brackets", "only :PORT may follow an IPv6 address's ]")
        sep, port = rest[:1], rest[1:]
    elif text.count(":") > 1:
        raise BadAddress("brackets", "an IPv6 address goes in brackets: [ADDRESS]:PORT")
    else:
        host, sep, port = text.partition(":")
    if not host:
        raise BadAddress("host", "no host")
    if not sep:
        return host, None
    number = whole_number(port, 1, 65535)
    if number is None:
        raise BadAddress("port", "the port is not a whole number from 1 to 65535", port)
    return host, number
