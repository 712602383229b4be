# Finds what Windows PowerShell 5.1 does not understand in a script: PowerShell 6/7-only syntax
# (ternary, ??, ??=, ?. and ?[], && and || pipeline chains, clean blocks), ForEach-Object -Parallel,
# and 7-only parameters of the web and JSON cmdlets unless guarded by a version check
# (if ($PSVersionTable.PSVersion.Major -ge 6) { ... } or a PSEdition test; for a splatted hashtable,
# the assignment that adds the key is what must be guarded).
# Node types are compared by name: 5.1 has no such types (and reports these constructs as parse errors).

$script:SevenOnlyParameters = @{
    'Invoke-RestMethod' = @('SkipCertificateCheck', 'SslProtocol', 'Authentication', 'StatusCodeVariable', 'ResponseHeadersVariable', 'SkipHttpErrorCheck', 'MaximumRetryCount', 'RetryIntervalSec', 'Form', 'Resume', 'NoProxy', 'AllowUnencryptedAuthentication', 'PreserveAuthorizationOnRedirect', 'SkipHeaderValidation', 'HttpVersion', 'ConnectionTimeoutSeconds', 'OperationTimeoutSeconds', 'FollowRelLink', 'MaximumFollowRelLink', 'CustomMethod', 'Token', 'AllowInsecureRedirect', 'PreserveHttpMethodOnRedirect', 'UnixSocket')
    'Invoke-WebRequest' = @('SkipCertificateCheck', 'SslProtocol', 'Authentication', 'SkipHttpErrorCheck', 'MaximumRetryCount', 'RetryIntervalSec', 'Form', 'Resume', 'NoProxy', 'AllowUnencryptedAuthentication', 'PreserveAuthorizationOnRedirect', 'SkipHeaderValidation', 'HttpVersion', 'ConnectionTimeoutSeconds', 'OperationTimeoutSeconds', 'CustomMethod', 'Token', 'AllowInsecureRedirect', 'PreserveHttpMethodOnRedirect', 'UnixSocket')
    'ConvertFrom-Json'  = @('AsHashtable', 'Depth', 'NoEnumerate', 'DateKind')
    'ConvertTo-Json'    = @('AsArray', 'EscapeHandling', 'EnumsAsStrings')
    'ForEach-Object'    = @('Parallel', 'ThrottleLimit', 'TimeoutSeconds', 'AsJob', 'UseNewRunspace')
    'Get-Content'       = @('AsByteStream')
    'Set-Content'       = @('AsByteStream')
    'Select-Object'     = @('SkipIndex')
    'Select-String'     = @('Raw', 'NoEmphasis')
    'Test-Connection'   = @('TargetName', 'Ping', 'TcpPort', 'Traceroute', 'MtuSize', 'Repeat')
    'Start-Process'     = @('Environment')
}
$script:SevenOnlyCommands = @('Join-String', 'Get-Error', 'Test-Json', 'ConvertFrom-Markdown', 'Show-Markdown', 'Get-Uptime', 'Remove-Alias', 'Remove-Service', 'Get-SecureRandom', 'ConvertTo-CliXml', 'ConvertFrom-CliXml', 'Clear-RecycleBin')

function Test-UnderVersionGuard {
    # True when the node sits in an if/elseif branch whose condition checks the PowerShell version or edition.
    param($Node)
    $parent = $Node.Parent
    while ($parent) {
        if ($parent.GetType().Name -eq 'IfStatementAst') {
            foreach ($clause in $parent.Clauses) {
                if ($clause.Item1.Extent.Text -match 'PSVersion|PSEdition' -and $Node.Extent.StartOffset -ge $clause.Item2.Extent.StartOffset -and $Node.Extent.EndOffset -le $clause.Item2.Extent.EndOffset) {
                    return $true
                }
            }
        }
        $parent = $parent.Parent
    }
    return $false
}

function Find-PowerShell7Syntax {
    # Returns one object per finding: Line, What. Parse errors are findings too.
    param([Parameter(Mandatory = $true)][string]$Path)
    $tokens = $null
    $errors = $null
    $ast = [System.Management.Automation.Language.Parser]::ParseFile($Path, [ref]$tokens, [ref]$errors)
    $found = New-Object System.Collections.ArrayList
    foreach ($e in $errors) { [void]$found.Add([pscustomobject]@{ Line = $e.Extent.StartLineNumber; What = "parse error: $($e.Message)" }) }
    $nodes = $ast.FindAll({ $true }, $true)
    foreach ($node in $nodes) {
        $type = $node.GetType().Name
        $line = $node.Extent.StartLineNumber
        switch ($type) {
            'TernaryExpressionAst' { [void]$found.Add([pscustomobject]@{ Line = $line; What = 'ternary operator ? :' }) }
            'PipelineChainAst' { [void]$found.Add([pscustomobject]@{ Line = $line; What = 'pipeline chain && / ||' }) }
            'BinaryExpressionAst' {
                if ($node.Operator.ToString() -eq 'QuestionQuestion') { [void]$found.Add([pscustomobject]@{ Line = $line; What = 'null-coalescing ??' }) }
            }
            'AssignmentStatementAst' {
                if ($node.Operator.ToString() -eq 'QuestionQuestionEquals') { [void]$found.Add([pscustomobject]@{ Line = $line; What = 'null-coalescing assignment ??=' }) }
            }
            { $_ -in 'MemberExpressionAst', 'InvokeMemberExpressionAst', 'IndexExpressionAst' } {
                if ($node.PSObject.Properties['NullConditional'] -and $node.NullConditional) { [void]$found.Add([pscustomobject]@{ Line = $line; What = 'null-conditional ?. / ?[]' }) }
            }
            'ScriptBlockAst' {
                if ($node.PSObject.Properties['CleanBlock'] -and $node.CleanBlock) { [void]$found.Add([pscustomobject]@{ Line = $line; What = 'clean block' }) }
            }
            'CommandAst' {
                $name = $node.GetCommandName()
                if (-not $name) { break }
                if ($name -eq '%' -or $name -eq 'foreach') { $name = 'ForEach-Object' }
                if ($script:SevenOnlyCommands -contains $name) {
                    if (-not (Test-UnderVersionGuard $node)) { [void]$found.Add([pscustomobject]@{ Line = $line; What = "command $name (PowerShell 6+)" }) }
                }
                $bad = $script:SevenOnlyParameters[$name]
                if (-not $bad) { break }
                $used = @($node.CommandElements | Where-Object { $_.GetType().Name -eq 'CommandParameterAst' } | ForEach-Object { $_.ParameterName })
                # Splatted hashtables literal in the same script: @request built as @{ Key = ... } or $request.Key = ...
                foreach ($element in $node.CommandElements) {
                    if ($element.GetType().Name -eq 'VariableExpressionAst' -and $element.Splatted) {
                        $var = $element.VariablePath.UserPath
                        foreach ($h in $ast.FindAll({ param($n) $n.GetType().Name -eq 'AssignmentStatementAst' -and $n.Left.Extent.Text -match ('^\$' + [regex]::Escape($var) + '(\.|$)') }, $true)) {
                            # A key added behind a version check ($request.X = ... in if ($PSVersionTable...)) is fine.
                            if (Test-UnderVersionGuard $h) { continue }
                            if ($h.Left.GetType().Name -eq 'MemberExpressionAst') { $used += $h.Left.Member.Extent.Text }
                            foreach ($pair in $h.FindAll({ param($n) $n.GetType().Name -eq 'HashtableAst' }, $true)) {
                                foreach ($kv in $pair.KeyValuePairs) { $used += $kv.Item1.Extent.Text.Trim("'", '"') }
                            }
                        }
                    }
                }
                foreach ($p in $used) {
                    $match = $bad | Where-Object { $_ -like "$p*" -and $p.Length -ge 2 } | Select-Object -First 1
                    if ($match -and -not (Test-UnderVersionGuard $node)) {
                        [void]$found.Add([pscustomobject]@{ Line = $line; What = "$name -$match (PowerShell 6+) without a version check" })
                    }
                }
            }
        }
    }
    $found.ToArray()
}
