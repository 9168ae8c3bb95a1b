#!/bin/sh
# probe steps of scenario cfg-disabled
exec /harness/selinux-probe state:boot 'cmd:advisor:/usr/local/sbin/selinux-migrate-check --summary' 'klog:deprecated:Runtime disable is deprecated' 'klog:disabled:Disabled at runtime' 'klog:pruned:wrote to disable. This is no longer supported' cmd:getenforce:/usr/sbin/getenforce mount state:mounted write:one:1 write:zero:0 write:junk:abc write:empty:- write:big:@4096 write:offset:1:1 write:nonroot:1:0:65534 'klog:pruned-after:wrote to disable. This is no longer supported' 'klog:notsupported:Runtime disable is not supported'
