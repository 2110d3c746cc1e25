#!/usr/bin/env python3
# Expands the @op(d, n, m) lines of kernels_arm64.s.in into WORD encodings
# (instructions the Go arm64 assembler has no mnemonic for), checks every
# word against GNU as (Debian package binutils-aarch64-linux-gnu), and
# writes the .s file:
#   python3 _asm/arm64/words.py _asm/arm64/kernels_arm64.s.in kernels_arm64.s
import os, re, subprocess, sys, tempfile
tmp = tempfile.mkdtemp()
ENC = {
 'smlal':  lambda d,n,m: 0x0E208000|m<<16|n<<5|d,
 'smlal2': lambda d,n,m: 0x4E208000|m<<16|n<<5|d,
 'sadalp': lambda d,n: 0x4E606800|n<<5|d,
 'fcvtl':  lambda d,n: 0x0E217800|n<<5|d,
 'fcvtl2': lambda d,n: 0x4E217800|n<<5|d,
 'fmul':   lambda d,n,m: 0x6E20DC00|m<<16|n<<5|d,
 'fadd':   lambda d,n,m: 0x4E20D400|m<<16|n<<5|d,
 'faddp':  lambda d,n,m: 0x6E20D400|m<<16|n<<5|d,
 'faddps': lambda d,n: 0x7E30D800|n<<5|d,
 'umaxv':  lambda d,n: 0x6EB0A800|n<<5|d,
 'frintn': lambda d,n: 0x4E218800|n<<5|d,
 'fmin':   lambda d,n,m: 0x4EA0F400|m<<16|n<<5|d,
 'fmax':   lambda d,n,m: 0x4E20F400|m<<16|n<<5|d,
 'fcvtzs': lambda d,n: 0x4EA1B800|n<<5|d,
 'xtnh':   lambda d,n: 0x0E612800|n<<5|d,
 'xtn2h':  lambda d,n: 0x4E612800|n<<5|d,
 'xtnb':   lambda d,n: 0x0E212800|n<<5|d,
 'xtn2b':  lambda d,n: 0x4E212800|n<<5|d,
}
TXT = {
 'smlal': 'smlal v{0}.8h, v{1}.8b, v{2}.8b', 'smlal2': 'smlal2 v{0}.8h, v{1}.16b, v{2}.16b',
 'sadalp': 'sadalp v{0}.4s, v{1}.8h', 'fcvtl': 'fcvtl v{0}.4s, v{1}.4h', 'fcvtl2': 'fcvtl2 v{0}.4s, v{1}.8h',
 'fmul': 'fmul v{0}.4s, v{1}.4s, v{2}.4s', 'fadd': 'fadd v{0}.4s, v{1}.4s, v{2}.4s',
 'faddp': 'faddp v{0}.4s, v{1}.4s, v{2}.4s', 'faddps': 'faddp s{0}, v{1}.2s', 'umaxv': 'umaxv s{0}, v{1}.4s',
 'frintn': 'frintn v{0}.4s, v{1}.4s', 'fmin': 'fmin v{0}.4s, v{1}.4s, v{2}.4s', 'fmax': 'fmax v{0}.4s, v{1}.4s, v{2}.4s',
 'fcvtzs': 'fcvtzs v{0}.4s, v{1}.4s', 'xtnh': 'xtn v{0}.4h, v{1}.4s', 'xtn2h': 'xtn2 v{0}.8h, v{1}.4s',
 'xtnb': 'xtn v{0}.8b, v{1}.8h', 'xtn2b': 'xtn2 v{0}.16b, v{1}.8h',
}
src = open(sys.argv[1]).read()
asm_lines = []
def rep(m):
    op, args = m.group(2), [int(a) for a in m.group(3).split(',')]
    txt = TXT[op].format(*args)
    asm_lines.append((txt, ENC[op](*args)))
    return '%sWORD $0x%08x // %s' % (m.group(1), ENC[op](*args), txt)
out = re.sub(r'^(\s*)@(\w+)\(([\d, ]+)\)', rep, src, flags=re.M)
open(os.path.join(tmp,'chk.s'),'w').write('\n'.join(t for t,_ in asm_lines)+'\n')
subprocess.check_call(['aarch64-linux-gnu-as',os.path.join(tmp,'chk.s'),'-o',os.path.join(tmp,'chk.o')])
dis = subprocess.check_output(['aarch64-linux-gnu-objdump','-d',os.path.join(tmp,'chk.o')]).decode()
words = [int(l.split()[1],16) for l in dis.splitlines() if re.match(r'^\s+[0-9a-f]+:\s+[0-9a-f]{8}\s', l)]
assert words == [w for _,w in asm_lines], 'encoding mismatch'
open(sys.argv[2],'w').write(out)
print('ok', len(words), 'words checked against GNU as')
