#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""redis-py (Debian's python3-redis, hence Debian's python3) against
twinwire-kvd over TCP: the calls its users make most, unmodified.  The
daemon runs with transport = auto, so with the RDMA plugin on
TWINWIRE_PLUGIN_PATH and no RDMA device INFO carries the free-text reason
(commas, '=') that redis-py's INFO parser used to choke on.  TAP; exit 77
without redis-py.

  redis_py_client.py KVD"""
import sys
import threading

from kvd_servers import Tap, skip, start_kvd

try:
    import redis
except ImportError:
    skip('redis-py is not installed for %s (Debian package python3-redis)' % sys.executable)

SECTIONS = ['server', 'clients', 'memory', 'persistence', 'stats', 'replication', 'cpu', 'transport', 'keyspace']


def attempt(tap, description, fn):
    """Run one check; an exception fails it with the exception shown."""
    try:
        ok = fn()
        return tap.check(description, ok is not False, 'returned %r' % (ok,))
    except Exception as e:  # noqa: BLE001 - any failure is the test's finding
        return tap.check(description, False, '%s: %s' % (type(e).__name__, e))


def main():
    tap = Tap()
    port = start_kvd(sys.argv[1], '--transport', 'auto')
    r = redis.Redis(port=port, decode_responses=True)
    other = redis.Redis(port=port, decode_responses=True)
    r.set('seed', 1, ex=1000)

    attempt(tap, 'info() parses, transport_reason as one string',
            lambda: isinstance(r.info()['transport_reason'], str) and r.info()['redis_version'] == '7.0.0')
    for section in SECTIONS + ['all', 'everything', 'default']:
        attempt(tap, 'info(%r) parses into a non-empty dict' % section,
                lambda: isinstance(r.info(section), dict) and len(r.info(section)) > 0)
    attempt(tap, 'info("transport") names the transport and the reason',
            lambda: r.info('transport')['transport'] == 'tcp' and 'TCP' in r.info('transport')['transport_reason'])
    attempt(tap, 'info("keyspace") reads db0 as a dict', lambda: r.info('keyspace')['db0']['keys'] == 1
            and r.info('keyspace')['db0']['expires'] == 1)
    attempt(tap, 'info("memory") and info("cpu") carry numbers',
            lambda: r.info('memory')['used_memory'] > 0 and isinstance(r.info('cpu')['used_cpu_user'], float))

    r.flushall()
    r.mset({'user:1': 'a', 'user:2': 'b', 'order:1': 'c'})
    attempt(tap, 'keys() matches a pattern', lambda: sorted(r.keys('user:*')) == ['user:1', 'user:2'])
    r.mset({'bulk:%d' % i: i for i in range(500)})
    attempt(tap, 'scan_iter() walks every key once',
            lambda: sorted(r.scan_iter(match='bulk:*', count=50)) == sorted('bulk:%d' % i for i in range(500)))
    attempt(tap, 'scan() returns a cursor and keys',
            lambda: isinstance(r.scan(0, count=10)[0], int) and len(r.scan(0, count=10)[1]) > 0)
    r.rpush('list', 'x')
    attempt(tap, 'type() names strings, lists and missing keys',
            lambda: (r.type('user:1'), r.type('list'), r.type('nope')) == ('string', 'list', 'none'))
    attempt(tap, 'getset() returns the old value', lambda: r.getset('user:1', 'z') == 'a' and r.get('user:1') == 'z')
    attempt(tap, 'getdel() returns and deletes', lambda: r.getdel('user:2') == 'b' and r.exists('user:2') == 0)
    attempt(tap, 'setnx() sets only a missing key', lambda: r.setnx('n', 1) is True and r.setnx('n', 2) is False)
    attempt(tap, 'setex() sets with an expiry', lambda: r.setex('e', 100, 'v') and 0 < r.ttl('e') <= 100)
    attempt(tap, 'client_setname() and client_getname()',
            lambda: r.client_setname('kvd-test') and r.client_getname() == 'kvd-test')
    attempt(tap, 'unlink() deletes and counts', lambda: r.unlink('n', 'e', 'nope') == 2)

    def transactional():
        p = r.pipeline(transaction=True)
        p.set('t', 1).incr('t').incrby('t', 5).get('t')
        return p.execute() == [True, 2, 7, '7']
    attempt(tap, 'a transactional pipeline (MULTI/EXEC) returns every result', transactional)

    def plain():
        p = r.pipeline(transaction=False)
        for i in range(100):
            p.incr('plain')
        return p.execute() == list(range(1, 101))
    attempt(tap, 'a non-transactional pipeline returns every result in order', plain)

    def watched():
        p = r.pipeline()
        p.watch('balance')
        other.set('balance', 5)  # another client changes it
        p.multi()
        p.set('balance', 0)
        try:
            p.execute()
            return False
        except redis.WatchError:
            return r.get('balance') == '5'
    attempt(tap, 'a WATCHed key changed by another client makes execute() raise WatchError', watched)

    def helper():
        r.set('counter', 0)

        def bump(pipe):
            value = int(pipe.get('counter'))
            pipe.multi()
            pipe.set('counter', value + 1)
        threads = [threading.Thread(target=lambda: [redis.Redis(port=port).transaction(bump, 'counter')
                                                    for _ in range(50)]) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return r.get('counter') == '150'
    attempt(tap, 'transaction() with WATCH loses no update among three clients', helper)

    def errors_in_transaction():
        p = r.pipeline(transaction=True)
        p.set('s', 'text').incr('s')
        try:
            p.execute()
            return False
        except redis.ResponseError as e:
            return 'not an integer' in str(e)
    attempt(tap, 'a command failing inside EXEC raises ResponseError from execute()', errors_in_transaction)

    attempt(tap, 'lists: lpush, rpush, lrange, lpop, rpop',
            lambda: r.rpush('l', 'b', 'c') == 2 and r.lpush('l', 'a') == 3 and r.lrange('l', 0, -1) == ['a', 'b', 'c']
            and r.lpop('l') == 'a' and r.rpop('l') == 'c' and r.lpop('l', 5) == ['b'])
    attempt(tap, 'sets: sadd, smembers, spop, sismember',
            lambda: r.sadd('s2', 'a', 'b') == 2 and r.smembers('s2') == {'a', 'b'} and r.spop('s2') in ('a', 'b')
            and r.scard('s2') == 1)
    attempt(tap, 'hashes: hset with a mapping, hgetall, hget',
            lambda: r.hset('h', mapping={'a': '1', 'b': '2'}) == 2 and r.hgetall('h') == {'a': '1', 'b': '2'}
            and r.hget('h', 'b') == '2')
    attempt(tap, 'sorted sets: zadd with a mapping, zrange withscores, zpopmin',
            lambda: r.zadd('z', {'x': 2, 'y': 1.5}) == 2
            and r.zrange('z', 0, -1, withscores=True) == [('y', 1.5), ('x', 2.0)]
            and r.zpopmin('z') == [('y', 1.5)])

    def wrongtype():
        try:
            r.lpush('user:1', 'x')
            return False
        except redis.ResponseError as e:
            return str(e).startswith('WRONGTYPE')
    attempt(tap, 'a list command on a string raises WRONGTYPE', wrongtype)
    tap.finish()


if __name__ == '__main__':
    main()
